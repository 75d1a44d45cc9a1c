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
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/karmada-failover/lab/restore/cmd/flink-restore-webhook/app/options"
	"github.com/karmada-failover/lab/restore/webhook"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "flink-restore-webhook:", err)
		os.Exit(1)
	}
}

func run() error {
	o, err := options.Parse(os.Args[1:], flag.NewFlagSet("flink-restore-webhook", flag.ContinueOnError))
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return err
	}
	var lh slog.Handler = slog.NewTextHandler(os.Stderr, nil)
	if o.LogJSON {
		lh = slog.NewJSONHandler(os.Stderr, nil)
	}
	logger := slog.New(lh)
	ctrllog.SetLogger(logr.FromSlogHandler(lh))

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	trust, err := o.Trust()
	if err != nil {
		return err
	}
	tlsCfg, err := servingTLS(ctx, o, logger)
	if err != nil {
		return err
	}
	store, hasCreds, err := o.S3Store()
	if err != nil {
		return err
	}
	kube, err := newKubeClients(o.Kubeconfig)
	if err != nil {
		return err
	}
	defer kube.shutdown()
	tokens, err := kube.tokenReviewer()
	if err != nil {
		return err
	}
	auth := webhook.CallerAuth{
		AllowAnonymous: o.AnonymousEndpoints(),
		ClientCertCNs:  o.ClientCertCNs.Values,
		Tokens:         tokens,
		LocateUsers:    o.LocateUsers.Values,
		RatePerSecond:  o.RateLimit,
		Burst:          o.RateBurst,
	}
	warnCallerAuth(o, auth, logger)
	var events webhook.EventRecorder
	if o.EmitEvents {
		if events = kube.eventRecorder(); events == nil {
			logger.Info("no kube client (--kubeconfig, or in-cluster): objects admitted without state get no Warning Event")
		}
	}

	h, err := webhook.NewHandler(webhook.Config{
		Trust:                trust,
		JobIDKey:             o.JobIDKey,
		PrefixTemplate:       o.PrefixTemplate,
		DefaultCheckpointDir: o.DefaultCheckpointDir,
		OnMissing:            o.OnMissing,
		MissingGrace:         o.MissingGrace,
		UserSavepoint:        o.UserSavepoint,
		UpgradeMode:          o.UpgradeMode,
		Locator:              store,
		LookupTimeout:        o.LookupTimeout,
		Auth:                 auth,
		Events:               events,
		Logger:               logger,
	})
	if err != nil {
		return err
	}

	srv := &http.Server{
		Addr:              o.Listen,
		Handler:           h,
		TLSConfig:         tlsCfg,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
	logger.Info("serving", "listen", o.Listen, "trustedUsernames", trust.Usernames, "trustedGroups", trust.Groups,
		"jobIdKey", o.JobIDKey, "allowedPrefixTemplate", o.PrefixTemplate, "defaultCheckpointDir", o.DefaultCheckpointDir,
		"onMissing", o.OnMissing, "missingGrace", o.MissingGrace, "userSavepoint", o.UserSavepoint,
		"clientCA", o.ClientCAFile != "", "tokenReview", auth.Tokens != nil, "events", events != nil,
		"s3Endpoint", o.S3Endpoint, "s3Credentials", hasCreds)
	return serve(ctx, srv, logger)
}

// servingTLS serves the certificate of --tls-cert-file/--tls-key-file through a certwatcher,
// so that a renewed certificate (cert-manager, or the lab's) is used for new connections
// without a restart, and, with --client-ca-file, verifies client certificates when presented.
func servingTLS(ctx context.Context, o *options.Options, logger *slog.Logger) (*tls.Config, error) {
	cw, err := certwatcher.New(o.CertFile, o.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("loading TLS key pair: %w", err)
	}
	go func() {
		if err := cw.Start(ctx); err != nil {
			logger.Error("watching the serving certificate", "err", err)
		}
	}()
	cfg := &tls.Config{GetCertificate: cw.GetCertificate, MinVersion: tls.VersionTLS12}
	if o.ClientCAFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(o.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("--client-ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--client-ca-file %s holds no PEM certificate", o.ClientCAFile)
	}
	cfg.ClientCAs, cfg.ClientAuth = pool, tls.VerifyClientCertIfGiven
	return cfg, nil
}

// warnCallerAuth warns when nobody can call /locate, and when unauthenticated callers are
// accepted.
func warnCallerAuth(o *options.Options, auth webhook.CallerAuth, logger *slog.Logger) {
	anonymousLocate := false
	for _, e := range auth.AllowAnonymous {
		anonymousLocate = anonymousLocate || e == webhook.EndpointLocate
	}
	if o.ClientCAFile == "" && auth.Tokens == nil && !anonymousLocate {
		logger.Warn("/locate has no way to authenticate callers (no --client-ca-file, no kube client for TokenReview): every call is refused")
	}
	if len(auth.AllowAnonymous) > 0 {
		logger.Warn("unauthenticated callers are accepted (--insecure-allow-anonymous): for labs only", "endpoints", auth.AllowAnonymous)
	}
}

// serve runs srv until ctx ends (SIGTERM/SIGINT), then shuts it down gracefully.
func serve(ctx context.Context, srv *http.Server, logger *slog.Logger) error {
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
