package framework

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
)

// KarmadaContext is the context of the Karmada API server in karmada.config.
const KarmadaContext = "karmada-apiserver"

// FaultInjector is what differs between lab providers: how a member cluster is
// made to fail and recover, and how a workload's pods are made unhealthy in one
// member. Everything else the scenarios do goes through the API servers.
type FaultInjector interface {
	// StopCluster crashes the member (SIGKILL to everything in it: its API
	// becomes unreachable, its workloads die without a clean shutdown), or
	// with graceful stops it with SIGTERM and a grace period.
	StopCluster(ctx context.Context, name string, graceful bool) error
	// StartCluster brings a stopped member back.
	StartCluster(ctx context.Context, name string) error
	// Partition cuts Karmada off a member that keeps running (heal: reconnects it).
	Partition(ctx context.Context, name string, heal bool) error
	// FailPods makes the pods matching selector in namespace of a member
	// unready (they keep running), or ready again with heal.
	FailPods(ctx context.Context, cluster, namespace, selector string, heal bool) error
	// StopController stops karmada-controller-manager; kill makes it a crash (SIGKILL).
	StopController(ctx context.Context, kill bool) error
	// StartController starts karmada-controller-manager, with feature gates
	// overriding the lab's (nil: the lab's own).
	StartController(ctx context.Context, gates map[string]bool) error
	// StarveFlink takes the task slots of a member's Flink jobs away (their
	// TaskManagers are lost: jobs stay CREATED), or gives them back.
	StarveFlink(ctx context.Context, cluster string, starve bool) error
	// Unsupported says why the provider cannot inject fault ("" when it can);
	// a scenario that needs the fault is skipped with the reason.
	Unsupported(fault Fault) string
}

// Fault names a fault a scenario injects.
type Fault string

// Faults the scenarios inject.
const (
	FaultStopCluster    Fault = "stop-cluster"
	FaultFailPods       Fault = "fail-pods"
	FaultStopController Fault = "stop-controller"
	FaultStarveFlink    Fault = "starve-flink"
	FaultPartition      Fault = "partition"
	// FaultFlinkRunner is not a fault but the lab's FlinkDeployment runner,
	// whose REST address the Flink scenarios read from the status.
	FaultFlinkRunner Fault = "flink-runner"
)

// Lab is the set of clusters the scenarios run against.
type Lab struct {
	Karmada  *ClusterProxy
	Members  map[string]*ClusterProxy
	Faults   FaultInjector
	LogDirs  []string // process logs copied into the artifacts
	Provider string
	// FlinkOutputDir holds the committed output of the lab's Flink jobs, one
	// directory per namespace/name ("": the lab has none).
	FlinkOutputDir string
	// Checkpoints is the lab's checkpoint store (nil: not reachable from the suite).
	Checkpoints *CheckpointStore
}

// NewLab builds proxies from upstream's two kubeconfigs: karmada.config (context
// karmada-apiserver) and members.config (one context per member).
func NewLab(karmadaConfig, membersConfig string, faults FaultInjector) (*Lab, error) {
	k, err := NewClusterProxy("karmada", karmadaConfig, KarmadaContext)
	if err != nil {
		return nil, err
	}
	mc, err := clientcmd.LoadFromFile(membersConfig)
	if err != nil {
		return nil, fmt.Errorf("members kubeconfig: %w", err)
	}
	l := &Lab{Karmada: k, Members: map[string]*ClusterProxy{}, Faults: faults}
	for name := range mc.Contexts {
		p, err := NewClusterProxy(name, membersConfig, name)
		if err != nil {
			return nil, err
		}
		l.Members[name] = p
	}
	if len(l.Members) == 0 {
		return nil, fmt.Errorf("%s has no member contexts", membersConfig)
	}
	return l, nil
}

// MemberNames lists the members in name order.
func (l *Lab) MemberNames() []string {
	var names []string
	for n := range l.Members {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Member returns the proxy of a member, failing loudly on a typo.
func (l *Lab) Member(name string) *ClusterProxy {
	p, ok := l.Members[name]
	if !ok {
		panic(fmt.Sprintf("no member %q in this lab (have %v)", name, l.MemberNames()))
	}
	return p
}

// ClusterReady reports the Ready condition of a Karmada Cluster.
func (l *Lab) ClusterReady(ctx context.Context, name string) (bool, error) {
	c, err := l.Karmada.Karmada().ClusterV1alpha1().Clusters().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	for _, cond := range c.Status.Conditions {
		if cond.Type == clusterv1alpha1.ClusterConditionReady {
			return cond.Status == metav1.ConditionTrue, nil
		}
	}
	return false, nil
}

// ClusterNoExecuteTaints lists the keys of a Cluster's NoExecute taints.
func (l *Lab) ClusterNoExecuteTaints(ctx context.Context, name string) ([]string, error) {
	c, err := l.Karmada.Karmada().ClusterV1alpha1().Clusters().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, t := range c.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			keys = append(keys, t.Key)
		}
	}
	return keys, nil
}

// TaintCluster adds a NoExecute taint to a Karmada Cluster (or removes it), as
// `karmadactl taint` does; it is provider-independent.
func (l *Lab) TaintCluster(ctx context.Context, name, key, value string, remove bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := l.Karmada.Karmada().ClusterV1alpha1().Clusters().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var kept []corev1.Taint
		for _, t := range c.Spec.Taints {
			if t.Key == key && t.Effect == corev1.TaintEffectNoExecute {
				continue
			}
			kept = append(kept, t)
		}
		if !remove {
			now := metav1.Now()
			kept = append(kept, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffectNoExecute, TimeAdded: &now})
		}
		c.Spec.Taints = kept
		_, err = l.Karmada.Karmada().ClusterV1alpha1().Clusters().Update(ctx, c, metav1.UpdateOptions{})
		return err
	})
}
