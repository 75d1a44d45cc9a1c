// Command flink-restore-webhook serves the FlinkDeployment restore webhook
// (POST /mutate), the checkpoint lookup for Kyverno (GET /locate) and
// GET /healthz over HTTPS.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/karmada-failover/lab/restore/checkpoint"
	"github.com/karmada-failover/lab/restore/webhook"
)

// listFlag is a repeatable string flag whose first Set replaces the default.
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

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "flink-restore-webhook:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		listen        = flag.String("listen", "127.0.0.1:24600", "HTTPS listen address")
		certFile      = flag.String("tls-cert-file", "", "TLS certificate (PEM), required")
		keyFile       = flag.String("tls-key-file", "", "TLS private key (PEM), required")
		jobIDKey      = flag.String("job-id-key", webhook.DefaultJobIDKey, "label (or annotation) carrying the old Flink jobId (the StatePreservation aliasLabelName)")
		prefixTmpl    = flag.String("allowed-prefix-template", webhook.DefaultPrefixTemplate, "checkpoint dirs must start with this prefix; {namespace} is replaced by the object's namespace; empty disables the check")
		onMissing     = flag.String("on-missing", webhook.OnMissingStartFresh, "when no completed checkpoint exists: start-fresh or deny")
		failurePolicy = flag.String("failure-policy", webhook.FailurePolicyFail, "when the store cannot be read: fail (deny, Karmada retries) or ignore (start fresh)")
		upgradeMode   = flag.String("set-upgrade-mode", webhook.UpgradeModeAuto, "set spec.job.upgradeMode=savepoint: auto (only if a savepoint dir is configured), always, never")
		timeout       = flag.Duration("lookup-timeout", 7*time.Second, "checkpoint lookup timeout (keep below the webhook's timeoutSeconds)")
		allowFile     = flag.Bool("allow-file-scheme", true, "allow file:// checkpoint dirs (read on this host; for the hermetic lab)")
		s3Endpoint    = flag.String("s3-endpoint", envOr("", "S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"), "S3 endpoint URL (env S3_ENDPOINT, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL); empty = AWS")
		s3Region      = flag.String("s3-region", envOr("us-east-1", "AWS_REGION", "AWS_DEFAULT_REGION"), "S3 region (env AWS_REGION)")
		s3AccessKey   = flag.String("s3-access-key", "", "S3 access key (default env AWS_ACCESS_KEY_ID; prefer the env or a credentials file over the flag)")
		s3SecretKey   = flag.String("s3-secret-key", "", "S3 secret key (default env AWS_SECRET_ACCESS_KEY)")
		s3CredsFile   = flag.String("s3-credentials-file", "", "AWS shared credentials file (INI) to read keys from")
		s3Profile     = flag.String("s3-profile", envOr("default", "AWS_PROFILE"), "profile in --s3-credentials-file")
		s3VHost       = flag.Bool("s3-virtual-host-style", false, "use virtual-hosted-style addressing instead of path-style")
		logJSON       = flag.Bool("log-json", false, "log as JSON")
	)
	trustedUsers := &listFlag{}
	trustedGroups := &listFlag{values: []string{webhook.DefaultTrustedGroup}}
	untrustedUsers := &listFlag{values: []string{webhook.DefaultUntrustedUsername}}
	flag.Var(trustedUsers, "trusted-username", "username allowed to carry the failover markers (repeatable), e.g. system:serviceaccount:karmada-cluster:karmada-member2")
	flag.Var(trustedGroups, "trusted-group", "group allowed to carry the failover markers (repeatable; default "+webhook.DefaultTrustedGroup+"; pass an empty value to trust no group)")
	flag.Var(untrustedUsers, "untrusted-username", "username never trusted through --trusted-group (repeatable; default "+webhook.DefaultUntrustedUsername+")")
	flag.Parse()

	var lh slog.Handler = slog.NewTextHandler(os.Stderr, nil)
	if *logJSON {
		lh = slog.NewJSONHandler(os.Stderr, nil)
	}
	logger := slog.New(lh)

	if *certFile == "" || *keyFile == "" {
		return errors.New("--tls-cert-file and --tls-key-file are required (the API server only calls webhooks over HTTPS)")
	}
	cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		return fmt.Errorf("loading TLS key pair: %w", err)
	}

	ak, sk, tok := *s3AccessKey, *s3SecretKey, ""
	if *s3CredsFile != "" && ak == "" && sk == "" {
		if ak, sk, tok, err = checkpoint.ReadCredentialsFile(*s3CredsFile, *s3Profile); err != nil {
			return err
		}
	}
	if ak == "" && sk == "" {
		ak, sk, tok = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")
	}
	s3Client := checkpoint.NewS3Client(checkpoint.S3Config{
		Endpoint:         *s3Endpoint,
		Region:           *s3Region,
		AccessKeyID:      ak,
		SecretAccessKey:  sk,
		SessionToken:     tok,
		VirtualHostStyle: *s3VHost,
	})

	h, err := webhook.NewHandler(webhook.Config{
		Trust: webhook.Trust{
			Usernames:         trustedUsers.values,
			Groups:            trustedGroups.values,
			ExcludedUsernames: untrustedUsers.values,
		},
		JobIDKey:       *jobIDKey,
		PrefixTemplate: *prefixTmpl,
		OnMissing:      *onMissing,
		FailurePolicy:  *failurePolicy,
		UpgradeMode:    *upgradeMode,
		Locator:        &checkpoint.Store{S3: s3Client, AllowFile: *allowFile},
		LookupTimeout:  *timeout,
		Logger:         logger,
	})
	if err != nil {
		return err
	}
	if len(trustedUsers.values) == 0 && len(trustedGroups.values) == 0 {
		logger.Warn("no trusted identity configured: every failover marker will be ignored")
	}

	srv := &http.Server{
		Addr:              *listen,
		Handler:           h,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	errCh := make(chan error, 1)
	go func() {
		logger.Info("serving", "listen", *listen, "trustedUsernames", trustedUsers.values, "trustedGroups", trustedGroups.values,
			"jobIdKey", *jobIDKey, "allowedPrefixTemplate", *prefixTmpl, "onMissing", *onMissing,
			"failurePolicy", *failurePolicy, "s3Endpoint", *s3Endpoint, "s3Credentials", ak != "")
		errCh <- srv.ListenAndServeTLS("", "")
	}()
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
