// Package local is the hermetic lab provider: the Karmada control plane and the
// member clusters run as local processes on 127.0.0.1, from binaries built from
// Go modules (hack/build.sh, hack/build-lab-binaries.sh). Members are kwokctl
// clusters with the binary runtime: a real etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler each, and kwok's controller as a
// stand-in for kubelets, so Deployments really become Available on fake nodes.
package local

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/pki"
	"github.com/karmada-failover/lab/lab/internal/proc"
)

// featureGates is the --feature-gates value of the lab's Karmada components
// (config.FeatureGates), with overrides for a scenario.
func featureGates(flavour config.Flavour, overrides map[string]bool) string {
	return config.FeatureGatesFlag(config.FeatureGates(flavour, overrides))
}

// Lab is a hermetic lab.
type Lab struct {
	Cfg  *config.Config
	Proc *proc.Manager
}

// New returns the lab described by cfg.
func New(cfg *config.Config) *Lab {
	return &Lab{Cfg: cfg, Proc: &proc.Manager{PIDDir: cfg.PIDDir(), LogDir: cfg.LogDir()}}
}

func (l *Lab) pki(name string) (crt, key string) {
	return pki.CertFile(l.Cfg.PKIDir(), name), pki.KeyFile(l.Cfg.PKIDir(), name)
}

func (l *Lab) caFile() string { c, _ := l.pki(pki.CA); return c }

func hostPort(port int) string { return config.Host + ":" + strconv.Itoa(port) }

func (l *Lab) karmadaServer() string { return "https://" + hostPort(l.Cfg.Ports.KarmadaAPIServer) }

// sourceTree is the Karmada tree whose manifests (CRDs, webhook configuration,
// RBAC) match the binaries the lab runs.
func (l *Lab) sourceTree() string {
	if l.Cfg.Karmada == config.FlavourUpstream {
		return filepath.Join(l.Cfg.Root, "_output", "upstream", "karmada")
	}
	return filepath.Join(l.Cfg.Root, "_output", "series", "karmada")
}

func (l *Lab) startEtcd(ctx context.Context) error { return l.startComponent(ctx, "etcd", nil) }

func (l *Lab) startAPIServer(ctx context.Context) error {
	return l.startComponent(ctx, "karmada-apiserver", nil)
}

func (l *Lab) startKubeControllerManager(ctx context.Context) error {
	return l.startComponent(ctx, "kube-controller-manager", nil)
}

func (l *Lab) startAggregatedAPIServer(ctx context.Context) error {
	return l.startComponent(ctx, "karmada-aggregated-apiserver", nil)
}

func (l *Lab) startWebhook(ctx context.Context) error {
	return l.startComponent(ctx, "karmada-webhook", nil)
}

func (l *Lab) startControllerManager(ctx context.Context) error {
	return l.startComponent(ctx, "karmada-controller-manager", nil)
}

func (l *Lab) startScheduler(ctx context.Context) error {
	return l.startComponent(ctx, "karmada-scheduler", nil)
}

// SwitchKarmada restarts karmada-webhook, karmada-controller-manager and
// karmada-scheduler from the other Karmada build (patched or upstream, same
// v1.18.2 source), for side-by-side benchmarks on one lab. The CRDs stay the
// patched tree's, a superset of upstream's.
func (l *Lab) SwitchKarmada(ctx context.Context, flavour config.Flavour) error {
	bins := config.DiscoverBinaries(l.Cfg.Root, flavour)
	for _, b := range []string{bins.KarmadaControllerManager, bins.KarmadaScheduler, bins.KarmadaWebhook} {
		if _, err := os.Stat(b); err != nil {
			return fmt.Errorf("karmada %s build: %w (make build-upstream / make build)", flavour, err)
		}
	}
	for _, n := range []string{"karmada-scheduler", "karmada-controller-manager", "karmada-webhook"} {
		if err := l.Proc.Stop(n, 10*time.Second); err != nil {
			return err
		}
	}
	l.Cfg.Karmada = flavour
	l.Cfg.Bins.KarmadaControllerManager = bins.KarmadaControllerManager
	l.Cfg.Bins.KarmadaScheduler = bins.KarmadaScheduler
	l.Cfg.Bins.KarmadaWebhook = bins.KarmadaWebhook
	if err := l.startWebhook(ctx); err != nil {
		return err
	}
	if err := l.startControllerManager(ctx); err != nil {
		return err
	}
	return l.startScheduler(ctx)
}

// caBundle is the base64 CA for webhook and APIService configurations.
func (l *Lab) caBundle() (string, error) {
	b, err := os.ReadFile(l.caFile())
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}
