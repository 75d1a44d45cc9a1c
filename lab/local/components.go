package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/pki"
	"github.com/karmada-failover/lab/lab/internal/proc"
)

// component is one control-plane process of the hermetic lab, as data: what it runs, where
// it answers, how long it may take to start. Up starts the components in the order of
// controlPlaneComponents, Down stops them in reverse, and Status probes them.
type component struct {
	name   string
	binary string
	args   []string
	// address is shown by `lab status`; ports are every port it listens on (the record's,
	// checked free before Up).
	address string
	ports   []int
	probe   proc.Probe
	// setup makes what belongs to the lab, not to one run of the process (credentials,
	// identities): Up runs it once, before the first start. A restart (a fault healed, a
	// controller restarted) does not, so the lab's clients keep what they were given.
	setup func() error
	// prepare writes what the process needs before each start (data folders, certificates
	// copied into place); it must keep what an earlier start left.
	prepare func() error
}

// Start timeouts: how long a component may take to answer its probe after it started, on a
// loaded 2-core machine (kube-apiserver, the slowest, answers within about 30 s).
var startTimeouts = map[string]time.Duration{
	"seaweedfs":                    90 * time.Second,
	"etcd":                         60 * time.Second,
	"karmada-apiserver":            2 * time.Minute,
	"kube-controller-manager":      60 * time.Second,
	"karmada-aggregated-apiserver": 90 * time.Second,
	"karmada-webhook":              60 * time.Second,
	"karmada-controller-manager":   90 * time.Second,
	"karmada-scheduler":            60 * time.Second,
}

// controlPlaneComponents are the control-plane processes in start order, with gates
// overriding the lab's feature gates of karmada-controller-manager (nil: the lab's own).
func (l *Lab) controlPlaneComponents(gates map[string]bool) []component {
	p, b := l.Cfg.Ports, l.Cfg.Bins
	caFile := l.caFile()
	kc := l.Cfg.KarmadaKubeconfig()
	etcdData := filepath.Join(l.Cfg.DataDir(), "etcd")
	peer, client := "http://"+hostPort(p.EtcdPeer), "http://"+hostPort(p.EtcdClient)
	srvCrt, srvKey := l.pki(pki.APIServer)
	fpCrt, fpKey := l.pki(pki.FrontProxyClient)
	fpCA, _ := l.pki(pki.FrontProxyCA)
	saKey, saPub := pki.ServiceAccountKeyFiles(l.Cfg.PKIDir())
	caCrt, caKey := l.pki(pki.CA)
	adminCrt, adminKey := l.pki(pki.Admin)
	aggCrt, aggKey := l.pki(pki.AggregatedAPIServer)
	// karmada-webhook reads tls.crt and tls.key from --cert-dir.
	webhookCertDir := filepath.Join(l.Cfg.PKIDir(), "karmada-webhook-serving")
	whCrt, whKey := l.pki(pki.Webhook)
	cmArgs := []string{
		"--kubeconfig=" + kc,
		"--metrics-bind-address=" + hostPort(p.ControllerManagerMetrics),
		"--health-probe-bind-address=" + hostPort(p.ControllerManagerHealth),
		"--controllers=*,hpaScaleTargetMarker,deploymentReplicasSyncer",
		"--feature-gates=" + featureGates(l.Cfg.Karmada, gates),
		"--leader-elect=false",
	}
	cmArgs = append(cmArgs, config.Args(l.Cfg.ControllerManagerFailoverFlags())...)
	cs := []component{
		{name: "seaweedfs", binary: b.SeaweedFS, address: hostPort(p.S3()), args: l.s3Args(), setup: l.setupS3, prepare: l.prepareS3,
			ports: []int{p.S3Base + 3, p.S3Base + 4, p.S3Base + 5, p.S3Base + 6, p.S3Base + 7, p.S3Base + 13, p.S3Base + 14, p.S3Base + 15, p.S3Base + 16, p.S3Base + 17},
			probe: proc.Probe{URL: "http://" + hostPort(p.S3()) + "/healthz"}},
		{name: "etcd", binary: b.Etcd, address: hostPort(p.EtcdClient), ports: []int{p.EtcdClient, p.EtcdPeer, p.EtcdMetrics},
			probe:   proc.Probe{URL: client + "/health"},
			prepare: func() error { return os.MkdirAll(etcdData, 0o700) },
			args: []string{
				"--name=karmada-etcd", "--data-dir=" + etcdData,
				"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
				"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
				"--initial-cluster=karmada-etcd=" + peer, "--initial-cluster-state=new",
				"--listen-metrics-urls=http://" + hostPort(p.EtcdMetrics),
				// A lab on a laptop: durability of a crash of the machine is not needed.
				"--unsafe-no-fsync=true", "--quota-backend-bytes=4294967296",
			}},
		{name: "karmada-apiserver", binary: b.KubeAPIServer, address: hostPort(p.KarmadaAPIServer), ports: []int{p.KarmadaAPIServer},
			probe: proc.Probe{URL: l.karmadaServer() + "/readyz", CAFile: caFile, CertFile: adminCrt, KeyFile: adminKey},
			args: []string{
				"--bind-address=" + config.Host, "--advertise-address=" + config.Host,
				// The "kubernetes" Service cannot point at a loopback address.
				"--endpoint-reconciler-type=none",
				"--secure-port=" + strconv.Itoa(p.KarmadaAPIServer),
				"--etcd-servers=" + client,
				"--allow-privileged=true", "--authorization-mode=Node,RBAC", "--enable-bootstrap-token-auth=true",
				"--disable-admission-plugins=StorageObjectInUseProtection,ServiceAccount",
				"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
				"--service-account-key-file=" + saPub, "--service-account-signing-key-file=" + saKey,
				"--service-cluster-ip-range=10.96.0.0/12",
				"--proxy-client-cert-file=" + fpCrt, "--proxy-client-key-file=" + fpKey,
				"--requestheader-client-ca-file=" + fpCA, "--requestheader-allowed-names=front-proxy-client",
				"--requestheader-extra-headers-prefix=X-Remote-Extra-", "--requestheader-group-headers=X-Remote-Group",
				"--requestheader-username-headers=X-Remote-User",
				"--tls-cert-file=" + srvCrt, "--tls-private-key-file=" + srvKey, "--client-ca-file=" + caFile,
			}},
		{name: "kube-controller-manager", binary: b.KubeControllerManager, address: hostPort(p.KubeControllerManager), ports: []int{p.KubeControllerManager},
			probe: proc.Probe{URL: "https://" + hostPort(p.KubeControllerManager) + "/healthz"},
			args: []string{
				"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
				"--bind-address=" + config.Host, "--secure-port=" + strconv.Itoa(p.KubeControllerManager),
				"--client-ca-file=" + caCrt, "--cluster-name=karmada",
				"--cluster-signing-cert-file=" + caCrt, "--cluster-signing-key-file=" + caKey,
				// The controllers upstream runs against karmada-apiserver (artifacts/deploy/kube-controller-manager.yaml).
				"--controllers=namespace,garbagecollector,serviceaccount-token,ttl-after-finished,bootstrapsigner,tokencleaner,csrcleaner,csrsigning,clusterrole-aggregation",
				"--leader-elect=false", "--root-ca-file=" + caCrt, "--service-account-private-key-file=" + saKey,
				"--service-cluster-ip-range=10.96.0.0/12", "--use-service-account-credentials=true",
			}},
		{name: "karmada-aggregated-apiserver", binary: b.KarmadaAggregatedAPIServer, address: hostPort(p.AggregatedAPIServer), ports: []int{p.AggregatedAPIServer},
			probe: proc.Probe{URL: "https://" + hostPort(p.AggregatedAPIServer) + "/readyz", CAFile: caFile},
			args: []string{
				"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
				"--etcd-servers=" + client,
				"--bind-address=" + config.Host, "--secure-port=" + strconv.Itoa(p.AggregatedAPIServer),
				"--tls-cert-file=" + aggCrt, "--tls-private-key-file=" + aggKey,
				"--audit-log-path=-", "--audit-log-maxage=0", "--audit-log-maxbackup=0",
			}},
		{name: "karmada-webhook", binary: b.KarmadaWebhook, address: hostPort(p.Webhook), ports: []int{p.Webhook, p.WebhookMetrics, p.WebhookHealth},
			probe: proc.Probe{URL: "https://" + hostPort(p.Webhook) + "/readyz", CAFile: caFile},
			prepare: func() error {
				if err := os.MkdirAll(webhookCertDir, 0o700); err != nil {
					return err
				}
				for src, dst := range map[string]string{whCrt: "tls.crt", whKey: "tls.key"} {
					b, err := os.ReadFile(src)
					if err != nil {
						return err
					}
					if err := os.WriteFile(filepath.Join(webhookCertDir, dst), b, 0o600); err != nil {
						return err
					}
				}
				return nil
			},
			args: []string{
				"--kubeconfig=" + kc,
				"--bind-address=" + config.Host, "--secure-port=" + strconv.Itoa(p.Webhook), "--cert-dir=" + webhookCertDir,
				"--metrics-bind-address=" + hostPort(p.WebhookMetrics), "--health-probe-bind-address=" + hostPort(p.WebhookHealth),
				"--feature-gates=" + featureGates(l.Cfg.Karmada, nil), "--allow-no-execute-taint-policy=true",
			}},
		{name: "karmada-controller-manager", binary: b.KarmadaControllerManager, address: hostPort(p.ControllerManagerHealth),
			ports: []int{p.ControllerManagerMetrics, p.ControllerManagerHealth},
			probe: proc.Probe{URL: "http://" + hostPort(p.ControllerManagerHealth) + "/healthz"}, args: cmArgs},
		{name: "karmada-scheduler", binary: b.KarmadaScheduler, address: hostPort(p.SchedulerHealth), ports: []int{p.SchedulerMetrics, p.SchedulerHealth},
			probe: proc.Probe{URL: "http://" + hostPort(p.SchedulerHealth) + "/healthz"},
			args: []string{
				"--kubeconfig=" + kc,
				"--metrics-bind-address=" + hostPort(p.SchedulerMetrics),
				"--health-probe-bind-address=" + hostPort(p.SchedulerHealth),
				"--feature-gates=" + featureGates(l.Cfg.Karmada, nil),
				"--leader-elect=false",
			}},
	}
	for i := range cs {
		cs[i].probe.StartTimeout = startTimeouts[cs[i].name]
	}
	return cs
}

// controlPlaneNames are the names of the control-plane processes, in start order.
func (l *Lab) controlPlaneNames() []string {
	var names []string
	for _, c := range l.controlPlaneComponents(nil) {
		names = append(names, c.name)
	}
	return names
}

// component returns the control-plane component name.
func (l *Lab) component(name string, gates map[string]bool) (component, error) {
	for _, c := range l.controlPlaneComponents(gates) {
		if c.name == name {
			return c, nil
		}
	}
	return component{}, fmt.Errorf("no control-plane component %q", name)
}

// setUpComponent makes what the control-plane component name needs once per lab (its setup).
// Up calls it before the component's first start; nothing else does.
func (l *Lab) setUpComponent(name string) error {
	c, err := l.component(name, nil)
	if err != nil {
		return err
	}
	if c.setup == nil {
		return nil
	}
	if err := c.setup(); err != nil {
		return fmt.Errorf("setting up %s: %w", name, err)
	}
	return nil
}

// startComponent prepares, starts and waits for the control-plane component name, within
// its start timeout. It is a start of a set-up lab: the component's setup is not run again.
func (l *Lab) startComponent(ctx context.Context, name string, gates map[string]bool) error {
	c, err := l.component(name, gates)
	if err != nil {
		return err
	}
	if c.prepare != nil {
		if err := c.prepare(); err != nil {
			return err
		}
	}
	if _, err := l.Proc.Start(proc.Spec{Name: c.name, Path: c.binary, Args: c.args}); err != nil {
		return err
	}
	return l.Proc.WaitReady(ctx, c.name, c.probe)
}
