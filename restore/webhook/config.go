// Package webhook implements a mutating admission webhook that restores a
// FlinkDeployment, re-created by Karmada on the cluster it failed over to,
// from the latest completed checkpoint of the job that ran on the old
// cluster, plus /locate, the same decision for Kyverno's apiCall.
package webhook

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/karmada-failover/lab/restore/checkpoint"
)

// The failover markers Karmada puts on a workload are named in apis/work/v1alpha2
// (workv1alpha2.FailoverReasonLabel and the Failover*Annotation keys): only the
// keys listed in workv1alpha2.FailoverPreservedKeysAnnotation are read as state,
// and nothing is restored from the clusters named in
// workv1alpha2.FailoverStateWithheldAnnotation.
const (
	// DefaultJobIDKey is the StatePreservation alias label name used by the
	// lab's PropagationPolicy ({.jobStatus.jobId}).
	DefaultJobIDKey = "flink.lab.karmada.io/job-id"

	// DefaultPrefixTemplate limits lookups to the namespace's own area.
	DefaultPrefixTemplate = "s3://flink-checkpoints/{namespace}/"
)

// How Karmada applies workloads to a member (Cluster spec.syncMode).
const (
	SyncModePush = "Push"
	SyncModePull = "Pull"

	// DefaultClusterNamespace is the member namespace `karmadactl join`
	// creates Karmada's ServiceAccount in (its --cluster-namespace).
	DefaultClusterNamespace = "karmada-cluster"
	// DefaultAgentServiceAccount is karmada-agent's ServiceAccount as
	// `karmadactl register` creates it (namespace/name).
	DefaultAgentServiceAccount = "karmada-system/karmada-agent-sa"
	// DefaultUntrustedUsername is the ServiceAccount karmada-aggregated-apiserver
	// impersonates end users with (cluster proxy); it never applies workloads.
	DefaultUntrustedUsername = "system:serviceaccount:karmada-cluster:karmada-impersonator"
)

// Annotations written by the webhook.
const (
	AnnotationDecision   = "restore.lab.karmada.io/decision"
	AnnotationCheckpoint = "restore.lab.karmada.io/checkpoint"
	AnnotationFromJobID  = "restore.lab.karmada.io/from-job-id"
	// AnnotationRestoredJobID is the job whose checkpoint was restored when
	// it is not the carried one: a later job of the same lineage (started
	// from the carried job's state and checkpointed since), or, without a
	// carried job, the newest job under the checkpoint directory.
	AnnotationRestoredJobID = "restore.lab.karmada.io/restored-job-id"
	// AnnotationReplacedSavepoint records the template's initialSavepointPath
	// a newer checkpoint replaced (--user-savepoint=override).
	AnnotationReplacedSavepoint = "restore.lab.karmada.io/replaced-savepoint"
	// AnnotationSkipped lists the newer completed checkpoints or savepoints
	// passed over because a state file their _metadata references is not in
	// the store (--verify-state-files), newest first, comma-separated.
	AnnotationSkipped = "restore.lab.karmada.io/skipped"
)

// Decisions (values of AnnotationDecision).
const (
	// DecisionRestored: initialSavepointPath set to the latest checkpoint.
	DecisionRestored = "restored"
	// DecisionRestoredOverUserSavepoint: the template's initialSavepointPath
	// replaced by a newer checkpoint of the carried job.
	DecisionRestoredOverUserSavepoint = "restored-over-user-savepoint"
	// DecisionKeptUserSavepoint: the template's initialSavepointPath kept.
	DecisionKeptUserSavepoint = "kept-user-savepoint"
	// DecisionRestoredLineage: the marker carries no job id (Karmada removes
	// it once the failover is complete, so this is a re-creation of a
	// failed-over object, or the job id could not be extracted): restored
	// from the newest completed checkpoint under the deployment's checkpoint
	// directory, neither rolling back nor starting fresh.
	DecisionRestoredLineage = "restored-latest-in-directory"

	// Admitted without the carried job's state, by the on-missing policy:
	DecisionIgnoredUntrusted = "ignored-untrusted-marker"
	DecisionNoJobID          = "no-job-id"
	// DecisionStateWithheld: Karmada withheld the state because the old job
	// may still run (failover.karmada.io/state-withheld): nothing is
	// restored, by the job id or otherwise.
	DecisionStateWithheld   = "state-withheld"
	DecisionNoCheckpointDir = "no-checkpoint-dir"
	DecisionNoCheckpoint    = "no-checkpoint-found"
	DecisionLookupFailed    = "lookup-failed"
)

// Policies.
const (
	// OnMissingDenyUntilGrace denies (Karmada retries) until
	// failover.karmada.io/time + MissingGrace, then admits without state.
	OnMissingDenyUntilGrace = "deny-until-grace"
	OnMissingDeny           = "deny"
	OnMissingStartFresh     = "start-fresh"

	// UserSavepointOverride restores from the carried job's latest checkpoint
	// unless the template's initialSavepointPath is known to be newer;
	// UserSavepointKeep always keeps the template's path.
	UserSavepointOverride = "override"
	UserSavepointKeep     = "keep"

	// UpgradeModeAuto sets spec.job.upgradeMode=savepoint only when the
	// savepoint directory is configured (the operator's validator rejects
	// upgradeMode savepoint without one); UpgradeModeAlways always sets it;
	// UpgradeModeNever leaves it (the operator records SAVEPOINT on the first
	// deployment whenever initialSavepointPath is set anyway).
	UpgradeModeAuto   = "auto"
	UpgradeModeAlways = "always"
	UpgradeModeNever  = "never"
)

// Defaults of Config.
const (
	DefaultMissingGrace  = 5 * time.Minute
	DefaultLookupTimeout = 7 * time.Second
)

// KarmadaIdentity describes how Karmada applies workloads to this member, to
// derive the exact username it does so as.
type KarmadaIdentity struct {
	// SyncMode is SyncModePush (karmadactl join) or SyncModePull
	// (karmada-agent).
	SyncMode string
	// ClusterNames (Push) are the member's names in Karmada (`karmadactl join
	// <name>`); several when one webhook serves several members.
	ClusterNames []string
	// ClusterNamespace (Push) is karmadactl join's --cluster-namespace.
	ClusterNamespace string
	// AgentServiceAccount (Pull) is karmada-agent's ServiceAccount,
	// namespace/name.
	AgentServiceAccount string
}

// Usernames returns the usernames Karmada applies workloads as:
// system:serviceaccount:<ClusterNamespace>:karmada-<cluster> for each cluster
// name in Push mode (the ServiceAccount `karmadactl join` creates,
// names.GenerateServiceAccountName), karmada-agent's ServiceAccount in Pull
// mode. Push mode without cluster names derives none.
func (k KarmadaIdentity) Usernames() ([]string, error) {
	switch k.SyncMode {
	case SyncModePush, "":
		ns := k.ClusterNamespace
		if ns == "" {
			ns = DefaultClusterNamespace
		}
		if err := dnsLabel("cluster namespace", ns); err != nil {
			return nil, err
		}
		var out []string
		for _, c := range k.ClusterNames {
			if errs := validation.IsDNS1123Subdomain(c); len(errs) > 0 {
				return nil, fmt.Errorf("cluster name %q: %s", c, strings.Join(errs, "; "))
			}
			out = append(out, serviceAccountUsername(ns, "karmada-"+c))
		}
		return out, nil
	case SyncModePull:
		sa := k.AgentServiceAccount
		if sa == "" {
			sa = DefaultAgentServiceAccount
		}
		ns, name, ok := strings.Cut(sa, "/")
		if !ok {
			return nil, fmt.Errorf("karmada-agent ServiceAccount %q: want namespace/name", sa)
		}
		if err := dnsLabel("karmada-agent namespace", ns); err != nil {
			return nil, err
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return nil, fmt.Errorf("karmada-agent ServiceAccount name %q: %s", name, strings.Join(errs, "; "))
		}
		return []string{serviceAccountUsername(ns, name)}, nil
	default:
		return nil, fmt.Errorf("sync mode must be %s or %s, not %q", SyncModePush, SyncModePull, k.SyncMode)
	}
}

func serviceAccountUsername(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

func dnsLabel(what, v string) error {
	if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
		return fmt.Errorf("%s %q: %s", what, v, strings.Join(errs, "; "))
	}
	return nil
}

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

// IsEmpty reports whether nobody is trusted.
func (t Trust) IsEmpty() bool { return len(t.Usernames) == 0 && len(t.Groups) == 0 }

// describe names the trusted identities for messages.
func (t Trust) describe() string {
	var parts []string
	if len(t.Usernames) > 0 {
		parts = append(parts, "users "+strings.Join(t.Usernames, ", "))
	}
	if len(t.Groups) > 0 {
		parts = append(parts, "groups "+strings.Join(t.Groups, ", "))
	}
	if len(parts) == 0 {
		return "nobody (no trusted identity configured)"
	}
	return strings.Join(parts, "; ")
}

// EventRecorder emits Events (client-go's record.EventRecorder satisfies it).
type EventRecorder interface {
	Event(object runtime.Object, eventtype, reason, message string)
}

// Config configures the Handler.
type Config struct {
	Trust    Trust
	JobIDKey string
	// PrefixTemplate: checkpoint dirs must lie within it, {namespace}
	// replaced by the object's namespace; "" disables the check. It is
	// compared segment by segment (as if it ended in "/"), with s3, s3a and
	// s3p equivalent.
	PrefixTemplate string
	// DefaultCheckpointDir is used when spec.flinkConfiguration sets no
	// checkpoint directory (the operator's default configuration does);
	// {namespace} is replaced.
	DefaultCheckpointDir string
	OnMissing            string
	// MissingGrace: with OnMissingDenyUntilGrace, how long after
	// failover.karmada.io/time a failover without state is denied.
	MissingGrace  time.Duration
	UserSavepoint string
	UpgradeMode   string
	Locator       checkpoint.Locator
	LookupTimeout time.Duration
	// Auth authenticates callers of /mutate and /locate.
	Auth CallerAuth
	// Events, when set, receives a Warning Event for every object admitted
	// without the carried job's state.
	Events EventRecorder
	Logger *slog.Logger
	// Now returns the current time (tests); nil means time.Now.
	Now func() time.Time
}

// Validate fills defaults and checks the enums and templates.
func (c *Config) Validate() error {
	if c.JobIDKey == "" {
		c.JobIDKey = DefaultJobIDKey
	}
	if c.OnMissing == "" {
		c.OnMissing = OnMissingDenyUntilGrace
	}
	if c.MissingGrace <= 0 {
		c.MissingGrace = DefaultMissingGrace
	}
	if c.UserSavepoint == "" {
		c.UserSavepoint = UserSavepointOverride
	}
	if c.UpgradeMode == "" {
		c.UpgradeMode = UpgradeModeAuto
	}
	if c.LookupTimeout <= 0 {
		c.LookupTimeout = DefaultLookupTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Locator == nil {
		return fmt.Errorf("no checkpoint locator")
	}
	for _, e := range []struct{ flag, v string }{
		{"on-missing", c.OnMissing},
		{"user-savepoint", c.UserSavepoint},
		{"set-upgrade-mode", c.UpgradeMode},
	} {
		if err := oneOf(e.flag, e.v); err != nil {
			return err
		}
	}
	if err := c.validateTemplates(); err != nil {
		return err
	}
	return c.Auth.validate()
}

var enums = map[string][]string{
	"on-missing":       {OnMissingDenyUntilGrace, OnMissingDeny, OnMissingStartFresh},
	"user-savepoint":   {UserSavepointOverride, UserSavepointKeep},
	"set-upgrade-mode": {UpgradeModeAuto, UpgradeModeAlways, UpgradeModeNever},
}

func oneOf(flag, v string) error {
	if !slices.Contains(enums[flag], v) {
		return fmt.Errorf("%s must be one of %s, not %q", flag, strings.Join(enums[flag], ", "), v)
	}
	return nil
}

// validateTemplates checks that the templates render to valid locations and
// normalises the prefix template to end in "/".
func (c *Config) validateTemplates() error {
	const sample = "namespace"
	if c.PrefixTemplate != "" {
		if !strings.Contains(c.PrefixTemplate, "{namespace}") {
			c.Logger.Warn("allowed prefix template does not contain {namespace}: every namespace may restore from the same area", "template", c.PrefixTemplate)
		}
		if _, err := checkpoint.ParseLocation(render(c.PrefixTemplate, sample)); err != nil {
			return fmt.Errorf("allowed-prefix-template %q: %w", c.PrefixTemplate, err)
		}
		if !strings.HasSuffix(c.PrefixTemplate, "/") {
			c.PrefixTemplate += "/"
		}
	}
	if c.DefaultCheckpointDir != "" {
		if _, err := checkpoint.ParseLocation(render(c.DefaultCheckpointDir, sample)); err != nil {
			return fmt.Errorf("default-checkpoint-dir %q: %w", c.DefaultCheckpointDir, err)
		}
	}
	return nil
}

func render(template, namespace string) string {
	return strings.ReplaceAll(template, "{namespace}", namespace)
}

// AllowedPrefix renders the prefix template for a namespace ("" = no limit).
func (c *Config) AllowedPrefix(namespace string) string {
	return render(c.PrefixTemplate, namespace)
}

// checkPrefix returns a human-readable reason when loc is outside the
// namespace's allowed prefix.
func (c *Config) checkPrefix(namespace string, loc checkpoint.Location) string {
	if c.PrefixTemplate == "" {
		return ""
	}
	prefix := c.AllowedPrefix(namespace)
	allowed, err := checkpoint.ParseLocation(prefix)
	if namespace == "" || err != nil || !loc.Within(allowed) {
		return fmt.Sprintf("checkpoint directory %q is outside the area allowed for namespace %q (%q)", loc.String(), namespace, prefix)
	}
	return ""
}
