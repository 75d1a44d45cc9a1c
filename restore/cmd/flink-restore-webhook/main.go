// Command flink-restore-webhook serves the FlinkDeployment restore webhook
// (POST /mutate), the same decision and a checkpoint lookup for Kyverno
// (POST and GET /locate) and GET /healthz over HTTPS.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/karmada-failover/lab/restore/checkpoint"
	"github.com/karmada-failover/lab/restore/webhook"
)

// listFlag is a repeatable string flag whose first Set replaces the default;
// an empty value clears the list.
type listFlag struct {
	values []string
	set    bool
}

func (l *listFlag) String() string { return strings.Join(l.values, ",") }
func (l *listFlag) Set(v string) error {
	if !l.set {
		l.values, l.set = nil, true
	}
	if v != "" {
		l.values = append(l.values, v)
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

// options are the command line.
type options struct {
	listen, certFile, keyFile string

	identity       webhook.KarmadaIdentity
	clusterNames   listFlag
	trustedUsers   listFlag
	trustedGroups  listFlag
	untrustedUsers listFlag

	jobIDKey, prefixTmpl, defaultDir    string
	onMissing, userSavepoint, upgrade   string
	missingGrace, lookupTimeout         time.Duration
	allowFile                           bool
	s3Endpoint, s3Region                string
	s3AccessKey, s3SecretKey            string
	s3CredsFile, s3Profile              string
	s3VHost                             bool
	clientCAFile, anonymous, kubeconfig string
	clientCertCNs, locateUsers          listFlag
	rateLimit                           float64
	rateBurst                           int
	emitEvents, logJSON                 bool
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{
		untrustedUsers: listFlag{values: []string{webhook.DefaultUntrustedUsername}},
		locateUsers:    listFlag{values: []string{webhook.DefaultLocateCaller}},
	}
	fs := flag.NewFlagSet("flink-restore-webhook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:24600", "HTTPS listen address")
	fs.StringVar(&o.certFile, "tls-cert-file", "", "TLS certificate (PEM), required")
	fs.StringVar(&o.keyFile, "tls-key-file", "", "TLS private key (PEM), required")

	fs.StringVar(&o.identity.SyncMode, "sync-mode", webhook.SyncModePush, "how Karmada applies workloads to this member: Push (karmadactl join; trusts the ServiceAccount karmada-<cluster-name>) or Pull (karmada-agent; trusts --karmada-agent-serviceaccount)")
	fs.Var(&o.clusterNames, "cluster-name", "Push mode: this member's name in Karmada (karmadactl join <name>); repeatable when one webhook serves several members")
	fs.StringVar(&o.identity.ClusterNamespace, "cluster-namespace", webhook.DefaultClusterNamespace, "Push mode: the namespace karmadactl join created Karmada's ServiceAccount in (its --cluster-namespace)")
	fs.StringVar(&o.identity.AgentServiceAccount, "karmada-agent-serviceaccount", webhook.DefaultAgentServiceAccount, "Pull mode: karmada-agent's ServiceAccount, namespace/name (karmadactl register's default)")
	fs.Var(&o.trustedUsers, "trusted-username", "exact username also allowed to carry the failover markers (repeatable), e.g. system:serviceaccount:karmada-cluster:karmada-member2")
	fs.Var(&o.trustedGroups, "trusted-group", "group allowed to carry the failover markers (repeatable; default none; wider than an exact username)")
	fs.Var(&o.untrustedUsers, "untrusted-username", "username never trusted through --trusted-group (repeatable; default "+webhook.DefaultUntrustedUsername+")")

	fs.StringVar(&o.jobIDKey, "job-id-key", webhook.DefaultJobIDKey, "label (or annotation) carrying the old Flink jobId (the StatePreservation aliasLabelName)")
	fs.StringVar(&o.prefixTmpl, "allowed-prefix-template", webhook.DefaultPrefixTemplate, "checkpoint dirs must lie within this directory; {namespace} is replaced by the object's namespace; s3, s3a and s3p are equivalent; empty disables the check")
	fs.StringVar(&o.defaultDir, "default-checkpoint-dir", "", "checkpoint directory of objects whose flinkConfiguration sets none (the operator's default configuration); {namespace} is replaced")
	fs.StringVar(&o.onMissing, "on-missing", webhook.OnMissingDenyUntilGrace, "when a failed-over object has no state to restore: deny-until-grace, deny or start-fresh")
	fs.DurationVar(&o.missingGrace, "missing-grace", webhook.DefaultMissingGrace, "deny-until-grace: deny for this long after failover.karmada.io/time, then admit without state")
	fs.StringVar(&o.userSavepoint, "user-savepoint", webhook.UserSavepointOverride, "when the template sets spec.job.initialSavepointPath: override (a newer checkpoint of the carried job wins) or keep")
	fs.StringVar(&o.upgrade, "set-upgrade-mode", webhook.UpgradeModeAuto, "set spec.job.upgradeMode=savepoint: auto (only if a savepoint dir is configured), always, never")
	fs.DurationVar(&o.lookupTimeout, "lookup-timeout", webhook.DefaultLookupTimeout, "checkpoint lookup timeout (keep below the webhook's timeoutSeconds)")
	fs.BoolVar(&o.allowFile, "allow-file-scheme", true, "allow file:// checkpoint dirs (read on this host; for the hermetic lab)")

	fs.StringVar(&o.s3Endpoint, "s3-endpoint", envOr("", "S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"), "S3 endpoint URL (env S3_ENDPOINT, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL); empty = AWS")
	fs.StringVar(&o.s3Region, "s3-region", envOr("us-east-1", "AWS_REGION", "AWS_DEFAULT_REGION"), "S3 region (env AWS_REGION)")
	fs.StringVar(&o.s3AccessKey, "s3-access-key", "", "S3 access key (default env AWS_ACCESS_KEY_ID; prefer the env or a credentials file over the flag)")
	fs.StringVar(&o.s3SecretKey, "s3-secret-key", "", "S3 secret key (default env AWS_SECRET_ACCESS_KEY)")
	fs.StringVar(&o.s3CredsFile, "s3-credentials-file", "", "AWS shared credentials file (INI) to read keys from")
	fs.StringVar(&o.s3Profile, "s3-profile", envOr("default", "AWS_PROFILE"), "profile in --s3-credentials-file")
	fs.BoolVar(&o.s3VHost, "s3-virtual-host-style", false, "use virtual-hosted-style addressing instead of path-style")

	fs.StringVar(&o.clientCAFile, "client-ca-file", "", "CA bundle (PEM) verifying client certificates: the API server's for /mutate, optionally other callers' for /locate")
	fs.Var(&o.clientCertCNs, "client-cert-cn", "accept only client certificates with this CommonName (repeatable; default any certificate --client-ca-file verifies)")
	fs.Var(&o.locateUsers, "locate-allowed-username", "ServiceAccount allowed to call /locate with a bearer token (repeatable; default "+webhook.DefaultLocateCaller+"; an empty value allows any authenticated user)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of this member, for TokenReview (/locate tokens) and Events; empty = the in-cluster config when running in a pod, otherwise neither")
	fs.BoolVar(&o.emitEvents, "emit-events", true, "emit a Warning Event on objects admitted without state (needs a kube client and RBAC to create events)")
	fs.StringVar(&o.anonymous, "insecure-allow-anonymous", "", "comma-separated endpoints (mutate, locate) that also accept unauthenticated callers; for labs only")
	fs.Float64Var(&o.rateLimit, "rate-limit", webhook.DefaultRatePerSecond, "requests per second allowed per caller (and per address); negative disables")
	fs.IntVar(&o.rateBurst, "rate-burst", webhook.DefaultRateBurst, "burst of --rate-limit")
	fs.BoolVar(&o.logJSON, "log-json", false, "log as JSON")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.identity.ClusterNames = o.clusterNames.values
	return o, nil
}

// trust derives the trusted identities from the sync mode and the explicit
// flags.
func (o *options) trust() (webhook.Trust, error) {
	derived, err := o.identity.Usernames()
	if err != nil {
		return webhook.Trust{}, err
	}
	t := webhook.Trust{
		Usernames:         append(derived, o.trustedUsers.values...),
		Groups:            o.trustedGroups.values,
		ExcludedUsernames: o.untrustedUsers.values,
	}
	if t.IsEmpty() {
		return t, errors.New("no trusted identity: pass --cluster-name=<this member's name in Karmada> (Push mode, karmadactl join), " +
			"--sync-mode=Pull (karmada-agent), or --trusted-username")
	}
	return t, nil
}

func (o *options) anonymousEndpoints() []string {
	var out []string
	for _, e := range strings.Split(o.anonymous, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// tlsConfig loads the serving certificate and, with --client-ca-file,
// verifies client certificates when presented.
func (o *options) tlsConfig() (*tls.Config, error) {
	if o.certFile == "" || o.keyFile == "" {
		return nil, errors.New("--tls-cert-file and --tls-key-file are required (the API server only calls webhooks over HTTPS)")
	}
	cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading TLS key pair: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if o.clientCAFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(o.clientCAFile)
	if err != nil {
		return nil, fmt.Errorf("--client-ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--client-ca-file %s holds no PEM certificate", o.clientCAFile)
	}
	cfg.ClientCAs, cfg.ClientAuth = pool, tls.VerifyClientCertIfGiven
	return cfg, nil
}

// checkCallerAuth refuses a configuration in which the API server cannot
// call /mutate, and warns when nobody can call /locate.
func (o *options) checkCallerAuth(auth webhook.CallerAuth, logger *slog.Logger) error {
	if o.clientCAFile == "" && !slices.Contains(auth.AllowAnonymous, webhook.EndpointMutate) {
		return errors.New("/mutate accepts only callers with a client certificate: pass --client-ca-file (and have the API server present a " +
			"certificate it signed, see restore/README.md), or --insecure-allow-anonymous=mutate in a lab")
	}
	if o.clientCAFile == "" && auth.Tokens == nil && !slices.Contains(auth.AllowAnonymous, webhook.EndpointLocate) {
		logger.Warn("/locate has no way to authenticate callers (no --client-ca-file, no kube client for TokenReview): every call is refused")
	}
	if len(auth.AllowAnonymous) > 0 {
		logger.Warn("unauthenticated callers are accepted (--insecure-allow-anonymous): for labs only", "endpoints", auth.AllowAnonymous)
	}
	return nil
}

func (o *options) s3Client() (*checkpoint.Store, bool, error) {
	ak, sk, tok := o.s3AccessKey, o.s3SecretKey, ""
	if o.s3CredsFile != "" && ak == "" && sk == "" {
		var err error
		if ak, sk, tok, err = checkpoint.ReadCredentialsFile(o.s3CredsFile, o.s3Profile); err != nil {
			return nil, false, err
		}
	}
	if ak == "" && sk == "" {
		ak, sk, tok = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")
	}
	client := checkpoint.NewS3Client(checkpoint.S3Config{
		Endpoint:         o.s3Endpoint,
		Region:           o.s3Region,
		AccessKeyID:      ak,
		SecretAccessKey:  sk,
		SessionToken:     tok,
		VirtualHostStyle: o.s3VHost,
	})
	return &checkpoint.Store{S3: client, AllowFile: o.allowFile}, ak != "", nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "flink-restore-webhook:", err)
		os.Exit(1)
	}
}

func run() error {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	var lh slog.Handler = slog.NewTextHandler(os.Stderr, nil)
	if o.logJSON {
		lh = slog.NewJSONHandler(os.Stderr, nil)
	}
	logger := slog.New(lh)

	trust, err := o.trust()
	if err != nil {
		return err
	}
	tlsCfg, err := o.tlsConfig()
	if err != nil {
		return err
	}
	store, hasCreds, err := o.s3Client()
	if err != nil {
		return err
	}
	kube, err := newKubeClients(o.kubeconfig)
	if err != nil {
		return err
	}
	defer kube.shutdown()
	auth := webhook.CallerAuth{
		AllowAnonymous: o.anonymousEndpoints(),
		ClientCertCNs:  o.clientCertCNs.values,
		Tokens:         kube.tokenReviewer(),
		LocateUsers:    o.locateUsers.values,
		RatePerSecond:  o.rateLimit,
		Burst:          o.rateBurst,
	}
	if err := o.checkCallerAuth(auth, logger); err != nil {
		return err
	}
	var events webhook.EventRecorder
	if o.emitEvents {
		if events = kube.eventRecorder(); events == nil {
			logger.Info("no kube client (--kubeconfig, or in-cluster): objects admitted without state get no Warning Event")
		}
	}

	h, err := webhook.NewHandler(webhook.Config{
		Trust:                trust,
		JobIDKey:             o.jobIDKey,
		PrefixTemplate:       o.prefixTmpl,
		DefaultCheckpointDir: o.defaultDir,
		OnMissing:            o.onMissing,
		MissingGrace:         o.missingGrace,
		UserSavepoint:        o.userSavepoint,
		UpgradeMode:          o.upgrade,
		Locator:              store,
		LookupTimeout:        o.lookupTimeout,
		Auth:                 auth,
		Events:               events,
		Logger:               logger,
	})
	if err != nil {
		return err
	}

	srv := &http.Server{
		Addr:              o.listen,
		Handler:           h,
		TLSConfig:         tlsCfg,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
	logger.Info("serving", "listen", o.listen, "trustedUsernames", trust.Usernames, "trustedGroups", trust.Groups,
		"jobIdKey", o.jobIDKey, "allowedPrefixTemplate", o.prefixTmpl, "defaultCheckpointDir", o.defaultDir,
		"onMissing", o.onMissing, "missingGrace", o.missingGrace, "userSavepoint", o.userSavepoint,
		"clientCA", o.clientCAFile != "", "tokenReview", auth.Tokens != nil, "events", events != nil,
		"s3Endpoint", o.s3Endpoint, "s3Credentials", hasCreds)
	return serve(srv, logger)
}

// serve runs srv until SIGTERM/SIGINT, then shuts it down gracefully.
func serve(srv *http.Server, logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errCh := make(chan error, 1)
	go func() { errCh <- srv.ListenAndServeTLS("", "") }()
	select {
	case err := <-errCh:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errCh; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
