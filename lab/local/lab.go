package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	karmadaclientset "github.com/karmada-io/karmada/pkg/generated/clientset/versioned"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/kubeconfig"
	"github.com/karmada-failover/lab/lab/internal/pki"
	"github.com/karmada-failover/lab/lab/internal/poll"
	"github.com/karmada-failover/lab/lab/internal/proc"
	"github.com/karmada-failover/lab/lab/internal/steps"
)

func (l *Lab) writeState(s *lab.State) error { return lab.WriteState(l.Cfg, s) }

// Name is the provider: the hermetic lab.
func (l *Lab) Name() config.Provider { return config.ProviderLocal }

// Config is the lab's configuration.
func (l *Lab) Config() *config.Config { return l.Cfg }

// State reads the lab's record.
func (l *Lab) State() (*lab.State, error) { return lab.ReadState(l.Cfg) }

var _ lab.Provider = (*Lab)(nil)

// Info: the hermetic lab injects every fault and runs either Karmada build in place;
// its members run the FlinkDeployment runner when its record says so.
func (l *Lab) Info() lab.Info {
	st, err := l.State()
	return lab.Info{Builds: true, FlinkRunner: err == nil && st.FlinkRunner}
}

// ProcessPID is the PID of the lab's process name, when it runs (lab.Builds).
func (l *Lab) ProcessPID(name string) (int, bool) { return l.Proc.Running(name) }

// CollectLogs copies the logs of the lab's processes and of its members' processes into dst.
func (l *Lab) CollectLogs(_ context.Context, dst string) error {
	return errors.Join(lab.CopyLogs(l.Cfg.LogDir(), filepath.Join(dst, "lab")),
		lab.CopyLogs(filepath.Join(l.Cfg.KwokDir(), "clusters"), filepath.Join(dst, "members")))
}

// Running reports whether any process of the lab is alive.
func (l *Lab) Running() bool {
	for _, n := range l.Proc.Names() {
		if _, ok := l.Proc.Running(n); ok {
			return true
		}
	}
	for i := 1; i <= config.MaxMembers; i++ {
		for _, pid := range l.memberPIDs(config.Member(i).Name()) {
			if processAlive(pid) {
				return true
			}
		}
	}
	return false
}

// Plan checks that the hermetic lab can come up (its binaries, the Karmada tree,
// free ports and space), clears what an earlier lab left, and returns the steps
// that start its processes. lab.ErrAlreadyUp when it is running and healthy.
func (l *Lab) Plan(_ context.Context, out io.Writer) (*lab.Plan, error) {
	if l.Running() {
		if st, err := l.State(); err == nil && st.Ready {
			return nil, lab.ErrAlreadyUp
		}
		return nil, fmt.Errorf("a partial lab is running in %s; run `make lab-down` first", l.Cfg.Dir)
	}
	if err := l.Cfg.Bins.Check(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(l.sourceTree(), "charts", "karmada", "_crds")); err != nil {
		return nil, fmt.Errorf("no Karmada tree at %s for the CRDs and manifests; run `make build` (or `make build-upstream` for LAB_KARMADA=upstream)", l.sourceTree())
	}
	if l.FlinkEnabled() {
		if _, err := os.Stat(l.flinkCRD()); err != nil {
			return nil, fmt.Errorf("the FlinkDeployment CRD (LAB_FLINK_CRD): %w", err)
		}
	}
	if l.Cfg.Restore == config.RestoreKyverno {
		if !l.FlinkEnabled() {
			return nil, fmt.Errorf("LAB_RESTORE=kyverno restores FlinkDeployments, but Flink is left out: missing %s", l.FlinkDisabledReason())
		}
		if err := l.kyvernoReady(); err != nil {
			return nil, err
		}
	}
	if err := lab.CheckFreeSpace(l.Cfg.Dir, 2*lab.GiB); err != nil {
		return nil, err
	}
	components := l.components(l.Cfg.Restore)
	if err := lab.BusyPorts(components); err != nil {
		return nil, err
	}
	// Data from an earlier lab would bring back its objects: start clean, keep the PKI.
	for _, d := range []string{l.Cfg.DataDir(), l.Cfg.KwokDir(), l.Cfg.ManifestDir()} {
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
	}
	for _, f := range []string{l.Cfg.MembersKubeconfig(), l.Cfg.StateFile()} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return nil, err
		}
	}
	// The logs of the previous lab stay readable next to the new ones.
	prev := l.Cfg.LogDir() + ".previous"
	if err := os.RemoveAll(prev); err != nil {
		return nil, err
	}
	if err := os.Rename(l.Cfg.LogDir(), prev); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	if err := os.MkdirAll(l.Cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	st := lab.NewState(l.Cfg)
	st.FlinkRunner = l.FlinkEnabled()
	st.Restore = l.Cfg.Restore
	st.FlinkOutputDir = l.Cfg.FlinkOutputDir()
	st.Logs = []string{l.Cfg.LogDir(), filepath.Join(l.Cfg.KwokDir(), "clusters")}
	st.Components = components

	list := []steps.Step{
		{Name: "Generating certificates (karmada CA, front-proxy CA, serving and client pairs)", Run: func(context.Context) error {
			if err := pki.Generate(l.Cfg.PKIDir(), config.Host); err != nil {
				return err
			}
			return l.writeKarmadaKubeconfig()
		}},
		{Name: "Starting etcd", Run: l.startEtcd},
		{Name: "Starting karmada-apiserver", Run: l.startAPIServer},
		{Name: "Starting kube-controller-manager (namespace, garbage collector)", Run: l.startKubeControllerManager},
		{Name: "Installing Karmada CRDs and base RBAC", Run: func(ctx context.Context) error {
			if err := l.installBase(ctx); err != nil {
				return err
			}
			return l.installCRDs(ctx)
		}},
		{Name: "Starting karmada-aggregated-apiserver", Run: func(ctx context.Context) error {
			if err := l.startAggregatedAPIServer(ctx); err != nil {
				return err
			}
			return l.installAPIService(ctx)
		}},
		{Name: "Starting karmada-webhook", Run: func(ctx context.Context) error {
			if err := l.startWebhook(ctx); err != nil {
				return err
			}
			return l.installWebhookConfiguration(ctx)
		}},
		{Name: fmt.Sprintf("Starting karmada-controller-manager and karmada-scheduler (%s)", l.Cfg.Karmada), Run: func(ctx context.Context) error {
			if err := l.startControllerManager(ctx); err != nil {
				return err
			}
			if err := l.startScheduler(ctx); err != nil {
				return err
			}
			return l.installClusterTaintPolicy(ctx)
		}},
	}
	if l.Cfg.Bins.SeaweedFS != "" {
		list = append(list, steps.Step{Name: "Starting SeaweedFS (S3 for checkpoints, bucket " + lab.CheckpointBucket + ")", Run: l.setUpAndStartS3})
	}
	for _, m := range l.Cfg.MemberList() {
		list = append(list, steps.Step{
			Name: fmt.Sprintf("Creating %s (kwokctl, %d fake nodes)", m, l.Cfg.NodesPerMember),
			Run:  func(ctx context.Context) error { return l.createMember(ctx, m) },
		})
	}
	list = append(list, steps.Step{Name: "Joining members with karmadactl join (Push)", Run: func(ctx context.Context) error {
		for _, m := range st.Members {
			if err := l.joinMember(ctx, m); err != nil {
				return err
			}
		}
		return l.waitClustersReady(ctx, st.Members, 120*time.Second)
	}})
	if l.FlinkEnabled() {
		list = append(list, steps.Step{Name: "Installing the FlinkDeployment CRD and a FlinkDeployment runner per member (operator stand-in)",
			Run: func(ctx context.Context) error { return l.installFlink(ctx, st.Members) }})
	} else {
		fmt.Fprintf(out, " - Flink is left out: missing %s\n", l.FlinkDisabledReason())
	}

	return &lab.Plan{State: st, Steps: list}, nil
}

// writeKarmadaKubeconfig writes karmada.config with the contexts upstream's
// local-up writes: karmada-apiserver, and karmada-host. The hermetic lab has no
// separate host cluster, so karmada-host names the same API server.
func (l *Lab) writeKarmadaKubeconfig() error {
	crt, key := l.pki(pki.Admin)
	path := l.Cfg.KarmadaKubeconfig()
	if err := kubeconfig.Write(path, config.KarmadaContext, l.karmadaServer(), l.caFile(), crt, key); err != nil {
		return err
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return err
	}
	cfg.Contexts["karmada-host"] = &clientcmdapi.Context{Cluster: config.KarmadaContext, AuthInfo: config.KarmadaContext}
	return clientcmd.WriteToFile(*cfg, path)
}

func (l *Lab) karmadaClient() (*karmadaclientset.Clientset, error) {
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: l.Cfg.KarmadaKubeconfig()},
		&clientcmd.ConfigOverrides{CurrentContext: config.KarmadaContext}).ClientConfig()
	if err != nil {
		return nil, err
	}
	rc.Timeout = 5 * time.Second
	return karmadaclientset.NewForConfig(rc)
}

// waitClustersReady waits until every named Cluster reports Ready=True.
func (l *Lab) waitClustersReady(ctx context.Context, names []string, timeout time.Duration) error {
	kc, err := l.karmadaClient()
	if err != nil {
		return err
	}
	return poll.Until(ctx, timeout, 500*time.Millisecond, "clusters "+strings.Join(names, ", ")+" Ready", func(ctx context.Context) (bool, error) {
		for _, n := range names {
			c, err := kc.ClusterV1alpha1().Clusters().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if !clusterReady(c) {
				return false, fmt.Errorf("cluster %s not Ready yet", n)
			}
		}
		return true, nil
	})
}

func clusterReady(c *clusterv1alpha1.Cluster) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == clusterv1alpha1.ClusterConditionReady {
			return cond.Status == metav1.ConditionTrue
		}
	}
	return false
}

// TearDown stops the lab's components in reverse record order (a member's runner before
// its cluster, the members before the control plane) and deletes the members; then what
// the record does not list (the members of a lab of other settings, a process a scenario
// started). Data and logs stay.
func (l *Lab) TearDown(ctx context.Context, out io.Writer) error {
	var errs []error
	cs := l.recorded()
	deleted := map[string]bool{}
	for i := len(cs) - 1; i >= 0; i-- {
		switch c := cs[i]; {
		case c.Parent != "":
		case c.Kind == lab.KindCluster:
			deleted[c.Name] = true
			errs = append(errs, l.deleteMemberCluster(ctx, out, c.Name))
		default:
			if pid, ok := l.Proc.Running(processName(c)); ok {
				fmt.Fprintf(out, " • Stopping %s (pid %d)\n", c.Name, pid)
			}
			errs = append(errs, l.StopComponent(ctx, c.Name, false))
		}
	}
	entries, _ := os.ReadDir(filepath.Join(l.Cfg.KwokDir(), "clusters"))
	for _, e := range entries {
		if e.IsDir() && !deleted[e.Name()] {
			errs = append(errs, l.deleteMemberCluster(ctx, out, e.Name()))
		}
	}
	for _, name := range l.Proc.Names() {
		errs = append(errs, l.Proc.Stop(name, 10*time.Second))
	}
	return errors.Join(errs...)
}

// deleteMemberCluster deletes member name's cluster (its processes and data), keeping its
// logs with the lab's, and its context in members.config.
func (l *Lab) deleteMemberCluster(ctx context.Context, out io.Writer, name string) error {
	if _, err := os.Stat(l.memberDir(name)); err != nil {
		return nil
	}
	fmt.Fprintf(out, " • Deleting member %s\n", name)
	// kwokctl deletes a member's logs with it: keep them with the lab's logs.
	var errs []error
	if err := copyTree(filepath.Join(l.memberDir(name), "logs"), filepath.Join(l.Cfg.LogDir(), name)); err != nil && !os.IsNotExist(err) {
		errs = append(errs, err)
	}
	errs = append(errs, l.deleteMember(ctx, name), kubeconfig.RemoveContext(l.Cfg.MembersKubeconfig(), name))
	return errors.Join(errs...)
}

// Status probes every component of the lab's record; a member's is listed once it ran,
// and a member's cluster is the Karmada Cluster's readiness and taints.
func (l *Lab) Status(ctx context.Context) ([]lab.ComponentStatus, error) {
	ca := l.caFile()
	var clusters map[string]*clusterv1alpha1.Cluster
	if kc, err := l.karmadaClient(); err == nil {
		if list, err := kc.ClusterV1alpha1().Clusters().List(ctx, metav1.ListOptions{}); err == nil {
			clusters = map[string]*clusterv1alpha1.Cluster{}
			for i := range list.Items {
				clusters[list.Items[i].Name] = &list.Items[i]
			}
		}
	}
	memberPIDs := map[string]map[string]int{}
	var rows []lab.ComponentStatus
	for _, c := range l.recorded() {
		row := lab.ComponentStatus{Component: c.Name, Address: c.Address, Detail: "not running"}
		member, short := shortName(c)
		switch {
		case c.Kind == lab.KindCluster:
			row = lab.ComponentStatus{Component: c.Name + " (Karmada Cluster)", Detail: "not joined"}
			if kc, ok := clusters[c.Name]; ok {
				row.Healthy, row.Address, row.Detail = clusterReady(kc), kc.Spec.APIEndpoint, "Ready"
				if !row.Healthy {
					row.Detail = "NotReady"
				}
				for _, t := range kc.Spec.Taints {
					row.Detail += " taint " + t.Key + ":" + string(t.Effect)
				}
			}
		case c.Parent != "":
			if memberPIDs[c.Parent] == nil {
				memberPIDs[c.Parent] = l.memberPIDs(c.Parent)
			}
			if pid, ok := memberPIDs[c.Parent][short]; ok && processAlive(pid) {
				row.PID, row.Healthy, row.Detail = pid, true, ""
			}
		default:
			if _, err := os.Stat(l.Proc.LogFile(processName(c))); err != nil && member != "" {
				continue // not started yet
			}
			probe := proc.Probe{URL: c.Probe}
			if strings.HasPrefix(c.Probe, "https://") {
				probe.CAFile = ca
			}
			if member == "" {
				if cp, err := l.component(processName(c), nil); err == nil {
					probe = cp.probe
				}
			}
			if pid, running := l.Proc.Running(processName(c)); running {
				row.PID, row.Detail = pid, ""
				if err := probe.Check(ctx); err != nil {
					row.Detail = err.Error()
				} else {
					row.Healthy = true
				}
			}
			if short == linkComponent && row.Healthy {
				if st, err := l.LinkState(ctx, member); err == nil && st.Partitioned {
					// The process is fine, the lab is not: Karmada cannot reach the member.
					row.Healthy, row.Detail = false, "partitioned: Karmada cannot reach "+member
				}
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Env returns the exports that point kubectl, karmadactl and upstream's e2e
// suite at the lab, as upstream's local-up prints them.
func (l *Lab) Env() []string { return lab.Env(l.Cfg, l.Cfg.Bins.Kubectl, l.Cfg.Bins.Karmadactl) }
