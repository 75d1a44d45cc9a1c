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
	"github.com/karmada-failover/lab/lab/internal/poll"
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

// The control-plane processes, in start order. Stop goes in reverse.
var controlPlane = []string{
	"seaweedfs", "etcd", "karmada-apiserver", "kube-controller-manager", "karmada-aggregated-apiserver",
	"karmada-webhook", "karmada-controller-manager", "karmada-scheduler",
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

func (l *Lab) startEtcd(ctx context.Context) error {
	p := l.Cfg.Ports
	data := filepath.Join(l.Cfg.DataDir(), "etcd")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	peer := "http://" + hostPort(p.EtcdPeer)
	client := "http://" + hostPort(p.EtcdClient)
	if _, err := l.Proc.Start(proc.Spec{Name: "etcd", Path: l.Cfg.Bins.Etcd, Args: []string{
		"--name=karmada-etcd", "--data-dir=" + data,
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=karmada-etcd=" + peer, "--initial-cluster-state=new",
		"--listen-metrics-urls=http://" + hostPort(p.EtcdMetrics),
		// A lab on a laptop: durability of a crash of the machine is not needed.
		"--unsafe-no-fsync=true", "--quota-backend-bytes=4294967296",
	}}); err != nil {
		return err
	}
	return l.Proc.WaitReady(ctx, "etcd", proc.Probe{URL: client + "/health"})
}

func (l *Lab) startAPIServer(ctx context.Context) error {
	d := l.Cfg.PKIDir()
	srvCrt, srvKey := l.pki(pki.APIServer)
	fpCrt, fpKey := l.pki(pki.FrontProxyClient)
	fpCA, _ := l.pki(pki.FrontProxyCA)
	saKey, saPub := pki.ServiceAccountKeyFiles(d)
	if _, err := l.Proc.Start(proc.Spec{Name: "karmada-apiserver", Path: l.Cfg.Bins.KubeAPIServer, Args: []string{
		"--bind-address=" + config.Host, "--advertise-address=" + config.Host,
		// The "kubernetes" Service cannot point at a loopback address.
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(l.Cfg.Ports.KarmadaAPIServer),
		"--etcd-servers=http://" + hostPort(l.Cfg.Ports.EtcdClient),
		"--allow-privileged=true", "--authorization-mode=Node,RBAC", "--enable-bootstrap-token-auth=true",
		"--disable-admission-plugins=StorageObjectInUseProtection,ServiceAccount",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saPub, "--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=10.96.0.0/12",
		"--proxy-client-cert-file=" + fpCrt, "--proxy-client-key-file=" + fpKey,
		"--requestheader-client-ca-file=" + fpCA, "--requestheader-allowed-names=front-proxy-client",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-", "--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		"--tls-cert-file=" + srvCrt, "--tls-private-key-file=" + srvKey, "--client-ca-file=" + l.caFile(),
	}}); err != nil {
		return err
	}
	adminCrt, adminKey := l.pki(pki.Admin)
	return l.Proc.WaitReady(ctx, "karmada-apiserver", proc.Probe{
		URL: l.karmadaServer() + "/readyz", CAFile: l.caFile(), CertFile: adminCrt, KeyFile: adminKey,
	})
}

func (l *Lab) startKubeControllerManager(ctx context.Context) error {
	saKey, _ := pki.ServiceAccountKeyFiles(l.Cfg.PKIDir())
	caCrt, caKey := l.pki(pki.CA)
	kc := l.Cfg.KarmadaKubeconfig()
	if _, err := l.Proc.Start(proc.Spec{Name: "kube-controller-manager", Path: l.Cfg.Bins.KubeControllerManager, Args: []string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--bind-address=" + config.Host, "--secure-port=" + strconv.Itoa(l.Cfg.Ports.KubeControllerManager),
		"--client-ca-file=" + caCrt, "--cluster-name=karmada",
		"--cluster-signing-cert-file=" + caCrt, "--cluster-signing-key-file=" + caKey,
		// The controllers upstream runs against karmada-apiserver (artifacts/deploy/kube-controller-manager.yaml).
		"--controllers=namespace,garbagecollector,serviceaccount-token,ttl-after-finished,bootstrapsigner,tokencleaner,csrcleaner,csrsigning,clusterrole-aggregation",
		"--leader-elect=false", "--root-ca-file=" + caCrt, "--service-account-private-key-file=" + saKey,
		"--service-cluster-ip-range=10.96.0.0/12", "--use-service-account-credentials=true",
	}}); err != nil {
		return err
	}
	return l.Proc.WaitReady(ctx, "kube-controller-manager", proc.Probe{URL: "https://" + hostPort(l.Cfg.Ports.KubeControllerManager) + "/healthz"})
}

func (l *Lab) startAggregatedAPIServer(ctx context.Context) error {
	crt, key := l.pki(pki.AggregatedAPIServer)
	kc := l.Cfg.KarmadaKubeconfig()
	if _, err := l.Proc.Start(proc.Spec{Name: "karmada-aggregated-apiserver", Path: l.Cfg.Bins.KarmadaAggregatedAPIServer, Args: []string{
		"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
		"--etcd-servers=http://" + hostPort(l.Cfg.Ports.EtcdClient),
		"--bind-address=" + config.Host, "--secure-port=" + strconv.Itoa(l.Cfg.Ports.AggregatedAPIServer),
		"--tls-cert-file=" + crt, "--tls-private-key-file=" + key,
		"--audit-log-path=-", "--audit-log-maxage=0", "--audit-log-maxbackup=0",
	}}); err != nil {
		return err
	}
	return l.Proc.WaitReady(ctx, "karmada-aggregated-apiserver", proc.Probe{
		URL: "https://" + hostPort(l.Cfg.Ports.AggregatedAPIServer) + "/readyz", CAFile: l.caFile(),
	})
}

func (l *Lab) startWebhook(ctx context.Context) error {
	p := l.Cfg.Ports
	// karmada-webhook reads tls.crt and tls.key from --cert-dir.
	certDir := filepath.Join(l.Cfg.PKIDir(), "karmada-webhook-serving")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	crt, key := l.pki(pki.Webhook)
	for src, dst := range map[string]string{crt: "tls.crt", key: "tls.key"} {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(certDir, dst), b, 0o600); err != nil {
			return err
		}
	}
	if _, err := l.Proc.Start(proc.Spec{Name: "karmada-webhook", Path: l.Cfg.Bins.KarmadaWebhook, Args: []string{
		"--kubeconfig=" + l.Cfg.KarmadaKubeconfig(),
		"--bind-address=" + config.Host, "--secure-port=" + strconv.Itoa(p.Webhook), "--cert-dir=" + certDir,
		"--metrics-bind-address=" + hostPort(p.WebhookMetrics), "--health-probe-bind-address=" + hostPort(p.WebhookHealth),
		"--feature-gates=" + featureGates(l.Cfg.Karmada, nil), "--allow-no-execute-taint-policy=true",
	}}); err != nil {
		return err
	}
	return l.Proc.WaitReady(ctx, "karmada-webhook", proc.Probe{URL: "https://" + hostPort(p.Webhook) + "/readyz", CAFile: l.caFile()})
}

func (l *Lab) startControllerManager(ctx context.Context) error {
	return l.StartController(ctx, nil)
}

// StartController starts karmada-controller-manager, with gates
// overriding the lab's feature gates (nil: the lab's own). Scenarios use it to
// restart the controller after a crash or with FailoverHistory off.
func (l *Lab) StartController(ctx context.Context, gates map[string]bool) error {
	p := l.Cfg.Ports
	args := []string{
		"--kubeconfig=" + l.Cfg.KarmadaKubeconfig(),
		"--metrics-bind-address=" + hostPort(p.ControllerManagerMetrics),
		"--health-probe-bind-address=" + hostPort(p.ControllerManagerHealth),
		"--controllers=*,hpaScaleTargetMarker,deploymentReplicasSyncer",
		"--feature-gates=" + featureGates(l.Cfg.Karmada, gates),
		"--leader-elect=false",
	}
	args = append(args, config.Args(l.Cfg.ControllerManagerFailoverFlags())...)
	if _, err := l.Proc.Start(proc.Spec{Name: "karmada-controller-manager", Path: l.Cfg.Bins.KarmadaControllerManager, Args: args}); err != nil {
		return err
	}
	return l.Proc.WaitReady(ctx, "karmada-controller-manager", proc.Probe{URL: "http://" + hostPort(p.ControllerManagerHealth) + "/healthz"})
}

func (l *Lab) startScheduler(ctx context.Context) error {
	p := l.Cfg.Ports
	if _, err := l.Proc.Start(proc.Spec{Name: "karmada-scheduler", Path: l.Cfg.Bins.KarmadaScheduler, Args: []string{
		"--kubeconfig=" + l.Cfg.KarmadaKubeconfig(),
		"--metrics-bind-address=" + hostPort(p.SchedulerMetrics),
		"--health-probe-bind-address=" + hostPort(p.SchedulerHealth),
		"--feature-gates=" + featureGates(l.Cfg.Karmada, nil),
		"--leader-elect=false",
	}}); err != nil {
		return err
	}
	return l.Proc.WaitReady(ctx, "karmada-scheduler", proc.Probe{URL: "http://" + hostPort(p.SchedulerHealth) + "/healthz"})
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

// StopController stops karmada-controller-manager: gracefully, or with
// kill at once by SIGKILL, as a crash would.
func (l *Lab) StopController(_ context.Context, kill bool) error {
	if kill {
		return l.Proc.Kill("karmada-controller-manager")
	}
	return l.Proc.Stop("karmada-controller-manager", 10*time.Second)
}

// caBundle is the base64 CA for webhook and APIService configurations.
func (l *Lab) caBundle() (string, error) {
	b, err := os.ReadFile(l.caFile())
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// waitFor polls cond every interval until it returns true, an error, or timeout.
func waitFor(ctx context.Context, timeout, interval time.Duration, what string, cond func(context.Context) (bool, error)) error {
	return poll.Until(ctx, timeout, interval, what, cond)
}
