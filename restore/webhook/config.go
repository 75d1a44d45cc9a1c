// Package webhook implements a mutating admission webhook that restores a
// FlinkDeployment, re-created by Karmada on the cluster it failed over to,
// from the latest completed checkpoint of the job that ran on the old
// cluster, plus a small /locate lookup service for Kyverno's apiCall.
package webhook

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/karmada-failover/lab/restore/checkpoint"
)

// Karmada's failover markers (patched Karmada, see the project's patch set).
const (
	LabelFailoverReason = "failover.karmada.io/reason"
	AnnotationFrom      = "failover.karmada.io/from"
	AnnotationTime      = "failover.karmada.io/time"

	// DefaultJobIDKey is the StatePreservation alias label name used by the
	// lab's PropagationPolicy ({.jobStatus.jobId}).
	DefaultJobIDKey = "flink.lab.karmada.io/job-id"

	// DefaultPrefixTemplate limits lookups to the namespace's own area.
	DefaultPrefixTemplate = "s3://flink-checkpoints/{namespace}/"

	// Karmada's default execution identity in Push mode is the ServiceAccount
	// "karmada-<cluster>" in namespace "karmada-cluster" of the member, created
	// by `karmadactl join` (pkg/util/credential.go,
	// names.GenerateServiceAccountName). Its groups include
	// system:serviceaccounts:karmada-cluster.
	DefaultTrustedGroup = "system:serviceaccounts:karmada-cluster"
	// The impersonator ServiceAccount in the same namespace is used by
	// karmada-aggregated-apiserver to impersonate end users (cluster proxy);
	// it never applies workloads itself, so it is excluded by default.
	DefaultUntrustedUsername = "system:serviceaccount:karmada-cluster:karmada-impersonator"
)

// Annotations written by the webhook.
const (
	AnnotationDecision   = "restore.lab.karmada.io/decision"
	AnnotationCheckpoint = "restore.lab.karmada.io/checkpoint"
	AnnotationFromJobID  = "restore.lab.karmada.io/from-job-id"
)

// Decisions (values of AnnotationDecision).
const (
	DecisionRestored           = "restored"
	DecisionIgnoredUntrusted   = "ignored-untrusted-marker"
	DecisionNoCheckpoint       = "no-checkpoint-found"
	DecisionKeptUserSavepoint  = "kept-user-savepoint"
	DecisionLookupFailedIgnore = "lookup-failed-ignored"
)

// Policies.
const (
	OnMissingStartFresh = "start-fresh"
	OnMissingDeny       = "deny"

	FailurePolicyFail   = "fail"
	FailurePolicyIgnore = "ignore"

	// UpgradeModeAuto sets spec.job.upgradeMode=savepoint only when the
	// savepoint directory is configured (the operator's validator rejects
	// upgradeMode savepoint without one); UpgradeModeAlways always sets it;
	// UpgradeModeNever leaves it (the operator records SAVEPOINT on the first
	// deployment whenever initialSavepointPath is set anyway).
	UpgradeModeAuto   = "auto"
	UpgradeModeAlways = "always"
	UpgradeModeNever  = "never"
)

// Trust decides which requesters may carry Karmada's failover markers.
type Trust struct {
	Usernames []string
	Groups    []string
	// ExcludedUsernames are never trusted through Groups (an explicit entry in
	// Usernames still wins).
	ExcludedUsernames []string
}

// Trusted reports whether the user is trusted.
func (t Trust) Trusted(u authenticationv1.UserInfo) bool {
	if slices.Contains(t.Usernames, u.Username) {
		return true
	}
	if slices.Contains(t.ExcludedUsernames, u.Username) {
		return false
	}
	for _, g := range u.Groups {
		if slices.Contains(t.Groups, g) {
			return true
		}
	}
	return false
}

// Config configures the Handler.
type Config struct {
	Trust          Trust
	JobIDKey       string
	PrefixTemplate string
	OnMissing      string
	FailurePolicy  string
	UpgradeMode    string
	Locator        checkpoint.Locator
	LookupTimeout  time.Duration
	Logger         *slog.Logger
}

// Validate fills defaults and checks the enums.
func (c *Config) Validate() error {
	if c.JobIDKey == "" {
		c.JobIDKey = DefaultJobIDKey
	}
	if c.OnMissing == "" {
		c.OnMissing = OnMissingStartFresh
	}
	if c.FailurePolicy == "" {
		c.FailurePolicy = FailurePolicyFail
	}
	if c.UpgradeMode == "" {
		c.UpgradeMode = UpgradeModeAuto
	}
	if c.LookupTimeout <= 0 {
		c.LookupTimeout = 7 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Locator == nil {
		return fmt.Errorf("no checkpoint locator")
	}
	if c.OnMissing != OnMissingStartFresh && c.OnMissing != OnMissingDeny {
		return fmt.Errorf("on-missing must be %s or %s, not %q", OnMissingStartFresh, OnMissingDeny, c.OnMissing)
	}
	if c.FailurePolicy != FailurePolicyFail && c.FailurePolicy != FailurePolicyIgnore {
		return fmt.Errorf("failure-policy must be %s or %s, not %q", FailurePolicyFail, FailurePolicyIgnore, c.FailurePolicy)
	}
	switch c.UpgradeMode {
	case UpgradeModeAuto, UpgradeModeAlways, UpgradeModeNever:
	default:
		return fmt.Errorf("set-upgrade-mode must be auto, always or never, not %q", c.UpgradeMode)
	}
	if c.PrefixTemplate != "" && !strings.Contains(c.PrefixTemplate, "{namespace}") {
		c.Logger.Warn("allowed prefix template does not contain {namespace}: every namespace may restore from the same area", "template", c.PrefixTemplate)
	}
	return nil
}

// AllowedPrefix renders the prefix template for a namespace ("" = no limit).
func (c *Config) AllowedPrefix(namespace string) string {
	return strings.ReplaceAll(c.PrefixTemplate, "{namespace}", namespace)
}

// checkPrefix returns a human-readable reason when dir is outside the
// namespace's allowed prefix.
func (c *Config) checkPrefix(namespace string, dir checkpoint.Location) string {
	if c.PrefixTemplate == "" {
		return ""
	}
	prefix := c.AllowedPrefix(namespace)
	if namespace == "" || !dir.HasPrefix(prefix) {
		return fmt.Sprintf("checkpoint directory %q is outside the area allowed for namespace %q (%q)", dir.String(), namespace, prefix)
	}
	return ""
}
