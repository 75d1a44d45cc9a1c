// Package options holds the command line of flink-restore-webhook: the flags (AddFlags), their
// validation (Validate) and what is derived from them (Trust, AnonymousEndpoints, S3Store).
package options

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/karmada-failover/lab/restore/checkpoint"
	"github.com/karmada-failover/lab/restore/webhook"
)

// DefaultListen is the webhook's HTTPS address in the hermetic lab (one port per member:
// 24600 + member index, set by the lab).
const DefaultListen = "127.0.0.1:24600"

// ListFlag is a repeatable string flag whose first Set replaces the default; an empty value
// clears the list.
type ListFlag struct {
	Values []string
	set    bool
}

func (l *ListFlag) String() string { return strings.Join(l.Values, ",") }

// Set implements flag.Value.
func (l *ListFlag) Set(v string) error {
	if !l.set {
		l.Values, l.set = nil, true
	}
	if v != "" {
		l.Values = append(l.Values, v)
	}
	return nil
}

func envOr(def string, keys ...string) string {
	for _, k := range keys {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return def
}

// Options are the command line.
type Options struct {
	Listen, CertFile, KeyFile string

	Identity       webhook.KarmadaIdentity
	ClusterNames   ListFlag
	TrustedUsers   ListFlag
	TrustedGroups  ListFlag
	UntrustedUsers ListFlag

	JobIDKey, PrefixTemplate, DefaultCheckpointDir string
	OnMissing, UserSavepoint, UpgradeMode          string
	MissingGrace, LookupTimeout                    time.Duration
	AllowFile                                      bool
	// VerifyStateFiles and MaxSkipped configure checkpoint.Store.
	VerifyStateFiles                    bool
	MaxSkipped                          int
	S3Endpoint, S3Region                string
	S3AccessKey, S3SecretKey            string
	S3CredentialsFile, S3Profile        string
	S3VirtualHostStyle                  bool
	ClientCAFile, Anonymous, Kubeconfig string
	ClientCertCNs, LocateUsers          ListFlag
	RateLimit                           float64
	RateBurst                           int
	EmitEvents, LogJSON                 bool
}

// NewOptions returns the options with the defaults of repeatable flags set.
func NewOptions() *Options {
	return &Options{
		UntrustedUsers: ListFlag{Values: []string{webhook.DefaultUntrustedUsername}},
		LocateUsers:    ListFlag{Values: []string{webhook.DefaultLocateCaller}},
	}
}

// AddFlags adds the flags to fs.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Listen, "listen", DefaultListen, "HTTPS listen address")
	fs.StringVar(&o.CertFile, "tls-cert-file", "", "TLS certificate (PEM), required; a renewed file is picked up without a restart")
	fs.StringVar(&o.KeyFile, "tls-key-file", "", "TLS private key (PEM), required; a renewed file is picked up without a restart")

	fs.StringVar(&o.Identity.SyncMode, "sync-mode", webhook.SyncModePush, "how Karmada applies workloads to this member: Push (karmadactl join; trusts the ServiceAccount karmada-<cluster-name>) or Pull (karmada-agent; trusts --karmada-agent-serviceaccount)")
	fs.Var(&o.ClusterNames, "cluster-name", "Push mode: this member's name in Karmada (karmadactl join <name>); repeatable when one webhook serves several members")
	fs.StringVar(&o.Identity.ClusterNamespace, "cluster-namespace", webhook.DefaultClusterNamespace, "Push mode: the namespace karmadactl join created Karmada's ServiceAccount in (its --cluster-namespace)")
	fs.StringVar(&o.Identity.AgentServiceAccount, "karmada-agent-serviceaccount", webhook.DefaultAgentServiceAccount, "Pull mode: karmada-agent's ServiceAccount, namespace/name (karmadactl register's default)")
	fs.Var(&o.TrustedUsers, "trusted-username", "exact username also allowed to carry the failover markers (repeatable), e.g. system:serviceaccount:karmada-cluster:karmada-member2")
	fs.Var(&o.TrustedGroups, "trusted-group", "group allowed to carry the failover markers (repeatable; default none; wider than an exact username)")
	fs.Var(&o.UntrustedUsers, "untrusted-username", "username never trusted through --trusted-group (repeatable; default "+webhook.DefaultUntrustedUsername+")")

	fs.StringVar(&o.JobIDKey, "job-id-key", webhook.DefaultJobIDKey, "label (or annotation) carrying the old Flink jobId (the StatePreservation aliasLabelName)")
	fs.StringVar(&o.PrefixTemplate, "allowed-prefix-template", webhook.DefaultPrefixTemplate, "checkpoint dirs must lie within this directory; {namespace} is replaced by the object's namespace; s3, s3a and s3p are equivalent; empty disables the check")
	fs.StringVar(&o.DefaultCheckpointDir, "default-checkpoint-dir", "", "checkpoint directory of objects whose flinkConfiguration sets none (the operator's default configuration); {namespace} is replaced")
	fs.StringVar(&o.OnMissing, "on-missing", webhook.OnMissingDenyUntilGrace, "when a failed-over object has no state to restore: deny-until-grace, deny or start-fresh")
	fs.DurationVar(&o.MissingGrace, "missing-grace", webhook.DefaultMissingGrace, "deny-until-grace: deny for this long after failover.karmada.io/time, then admit without state")
	fs.StringVar(&o.UserSavepoint, "user-savepoint", webhook.UserSavepointOverride, "when the template sets spec.job.initialSavepointPath: override (a newer checkpoint of the carried job wins) or keep")
	fs.StringVar(&o.UpgradeMode, "set-upgrade-mode", webhook.UpgradeModeAuto, "set spec.job.upgradeMode=savepoint: auto (only if a savepoint dir is configured), always, never")
	fs.DurationVar(&o.LookupTimeout, "lookup-timeout", webhook.DefaultLookupTimeout, "checkpoint lookup timeout (keep below the webhook's timeoutSeconds)")
	fs.BoolVar(&o.AllowFile, "allow-file-scheme", true, "allow file:// checkpoint dirs (read on this host; for the hermetic lab)")
	fs.BoolVar(&o.VerifyStateFiles, "verify-state-files", true, "restore a checkpoint only when every state file its _metadata references is in the store (a replicated store can hold _metadata before its files); otherwise the newest restorable one, and say which were skipped")
	fs.IntVar(&o.MaxSkipped, "max-skipped-checkpoints", checkpoint.DefaultMaxSkipped, "--verify-state-files: completed checkpoints found not restorable before giving up (no checkpoint found)")

	fs.StringVar(&o.S3Endpoint, "s3-endpoint", envOr("", "S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"), "S3 endpoint URL (env S3_ENDPOINT, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL); empty = AWS")
	fs.StringVar(&o.S3Region, "s3-region", envOr("us-east-1", "AWS_REGION", "AWS_DEFAULT_REGION"), "S3 region (env AWS_REGION)")
	fs.StringVar(&o.S3AccessKey, "s3-access-key", "", "S3 access key (default env AWS_ACCESS_KEY_ID; prefer the env or a credentials file over the flag)")
	fs.StringVar(&o.S3SecretKey, "s3-secret-key", "", "S3 secret key (default env AWS_SECRET_ACCESS_KEY)")
	fs.StringVar(&o.S3CredentialsFile, "s3-credentials-file", "", "AWS shared credentials file (INI) to read keys from")
	fs.StringVar(&o.S3Profile, "s3-profile", envOr("default", "AWS_PROFILE"), "profile in --s3-credentials-file")
	fs.BoolVar(&o.S3VirtualHostStyle, "s3-virtual-host-style", false, "use virtual-hosted-style addressing instead of path-style")

	fs.StringVar(&o.ClientCAFile, "client-ca-file", "", "CA bundle (PEM) verifying client certificates: the API server's for /mutate, optionally other callers' for /locate")
	fs.Var(&o.ClientCertCNs, "client-cert-cn", "accept only client certificates with this CommonName (repeatable; default any certificate --client-ca-file verifies)")
	fs.Var(&o.LocateUsers, "locate-allowed-username", "ServiceAccount allowed to call /locate with a bearer token (repeatable; default "+webhook.DefaultLocateCaller+"; an empty value allows any authenticated user)")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of this member, for TokenReview (/locate tokens) and Events; empty = the in-cluster config when running in a pod, otherwise neither")
	fs.BoolVar(&o.EmitEvents, "emit-events", true, "emit a Warning Event on objects admitted without state (needs a kube client and RBAC to create events)")
	fs.StringVar(&o.Anonymous, "insecure-allow-anonymous", "", "comma-separated endpoints (mutate, locate) that also accept unauthenticated callers; for labs only")
	fs.Float64Var(&o.RateLimit, "rate-limit", webhook.DefaultRatePerSecond, "requests per second allowed per caller (and per address); negative disables")
	fs.IntVar(&o.RateBurst, "rate-burst", webhook.DefaultRateBurst, "burst of --rate-limit")
	fs.BoolVar(&o.LogJSON, "log-json", false, "log as JSON")
}

// Parse parses args into new options.
func Parse(args []string, fs *flag.FlagSet) (*Options, error) {
	o := NewOptions()
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.Identity.ClusterNames = o.ClusterNames.Values
	return o, nil
}

// Trust derives the trusted identities from the sync mode and the explicit flags.
func (o *Options) Trust() (webhook.Trust, error) {
	derived, err := o.Identity.Usernames()
	if err != nil {
		return webhook.Trust{}, err
	}
	return webhook.Trust{
		Usernames:         append(derived, o.TrustedUsers.Values...),
		Groups:            o.TrustedGroups.Values,
		ExcludedUsernames: o.UntrustedUsers.Values,
	}, nil
}

// AnonymousEndpoints lists the endpoints of --insecure-allow-anonymous.
func (o *Options) AnonymousEndpoints() []string {
	var out []string
	for _, e := range strings.Split(o.Anonymous, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// S3Store builds the checkpoint store; hasCredentials tells whether S3 keys were found.
func (o *Options) S3Store() (store *checkpoint.Store, hasCredentials bool, err error) {
	ak, sk, tok := o.S3AccessKey, o.S3SecretKey, ""
	if o.S3CredentialsFile != "" && ak == "" && sk == "" {
		if ak, sk, tok, err = checkpoint.ReadCredentialsFile(o.S3CredentialsFile, o.S3Profile); err != nil {
			return nil, false, err
		}
	}
	if ak == "" && sk == "" {
		ak, sk, tok = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")
	}
	client := checkpoint.NewS3Client(checkpoint.S3Config{
		Endpoint:         o.S3Endpoint,
		Region:           o.S3Region,
		AccessKeyID:      ak,
		SecretAccessKey:  sk,
		SessionToken:     tok,
		VirtualHostStyle: o.S3VirtualHostStyle,
	})
	if o.MaxSkipped < 1 {
		return nil, false, fmt.Errorf("--max-skipped-checkpoints must be at least 1, got %d", o.MaxSkipped)
	}
	return &checkpoint.Store{S3: client, AllowFile: o.AllowFile, VerifyStateFiles: o.VerifyStateFiles, MaxSkipped: o.MaxSkipped}, ak != "", nil
}
