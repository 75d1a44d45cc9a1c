package framework

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	// The estimator takes upstream's type, not the patched one of apis/.
	upstreamworkv1alpha2 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
	estimatorclient "github.com/karmada-io/karmada/pkg/estimator/client"

	"github.com/karmada-failover/lab/lab"
)

// KarmadaContext is the context of the Karmada API server in karmada.config.
const KarmadaContext = "karmada-apiserver"

// Lab is the set of clusters the scenarios run against, and the provider that runs them.
type Lab struct {
	Karmada *ClusterProxy
	Members map[string]*ClusterProxy
	// Provider injects the faults and stops and starts karmada-controller-manager.
	Provider lab.Provider
	// State is the running lab's record: its settings, log folders, Flink output.
	State *lab.State
	// Checkpoints is the lab's checkpoint store (nil: not reachable from the suite).
	Checkpoints *CheckpointStore
}

// NewLab builds proxies from upstream's two kubeconfigs: karmada.config (context
// karmada-apiserver) and members.config (one context per member).
func NewLab(karmadaConfig, membersConfig string, p lab.Provider, st *lab.State) (*Lab, error) {
	k, err := NewClusterProxy("karmada", karmadaConfig, KarmadaContext)
	if err != nil {
		return nil, err
	}
	mc, err := clientcmd.LoadFromFile(membersConfig)
	if err != nil {
		return nil, fmt.Errorf("members kubeconfig: %w", err)
	}
	if st == nil {
		st = &lab.State{}
	}
	l := &Lab{Karmada: k, Members: map[string]*ClusterProxy{}, Provider: p, State: st}
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
	return lab.TaintCluster(ctx, l.Karmada.Karmada(), name, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffectNoExecute}, remove)
}

// ProviderName is the name of the lab's provider ("" without one).
func (l *Lab) ProviderName() string {
	if l.Provider == nil {
		return ""
	}
	return string(l.Provider.Name())
}

// ClusterRoom is how many more replicas requesting requests Karmada's scheduler
// sees room for in cluster: its general estimator's answer, which dynamic weights
// (DynamicWeightByAvailableReplicas) divide a workload by.
func (l *Lab) ClusterRoom(ctx context.Context, cluster string, requests corev1.ResourceList) (int64, error) {
	c, err := l.Karmada.Karmada().ClusterV1alpha1().Clusters().Get(ctx, cluster, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	return ClusterRoomOf(ctx, c, requests)
}

// DividesOver says why a workload of replicas, divided by dynamic weights
// (DynamicWeightByAvailableReplicas) over any two of the clusters whose room
// (ClusterRoom) is given, could leave one of the two without a replica, or
// could not move to a third: nil when every cluster has room for all replicas
// and any two clusters' rooms are close enough that the smaller one's share,
// replicas*small/(small+large), is at least one replica.
func DividesOver(room map[string]int64, replicas int64) error {
	names := make([]string, 0, len(room))
	for c := range room {
		names = append(names, c)
	}
	sort.Strings(names)
	for i, a := range names {
		if room[a] < replicas {
			return fmt.Errorf("room for %d replicas in %s, not %d", room[a], a, replicas)
		}
		for _, b := range names[i+1:] {
			small, large := min(room[a], room[b]), max(room[a], room[b])
			if replicas*small < small+large {
				return fmt.Errorf("%s and %s have room for %d and %d replicas: divided by it, %d replicas could all go to one", a, b, room[a], room[b], replicas)
			}
		}
	}
	return nil
}

// ClusterRoomOf is ClusterRoom of a Cluster object, computed by Karmada's general
// estimator with Karmada's default feature gates, as karmada-scheduler runs it in
// the lab: with CustomizedClusterResourceModeling (on by default) and the
// Cluster's resource models, from the grades its nodes are counted in, which can
// say no room where the resource summary's totals have some (a node with 950m of
// CPU left is in the grade whose least CPU is 0); otherwise from the summary's
// allocatable less allocated and allocating.
func ClusterRoomOf(ctx context.Context, c *clusterv1alpha1.Cluster, requests corev1.ResourceList) (int64, error) {
	if c.Status.ResourceSummary == nil {
		return 0, fmt.Errorf("cluster %s has no resource summary yet", c.Name)
	}
	got, err := estimatorclient.NewGeneralEstimator().MaxAvailableReplicas(ctx, estimatorclient.ReplicaEstimationRequest{
		Clusters:            []*clusterv1alpha1.Cluster{c},
		ReplicaRequirements: &upstreamworkv1alpha2.ReplicaRequirements{ResourceRequest: requests},
	})
	if err != nil {
		return 0, fmt.Errorf("estimating the room in cluster %s: %w", c.Name, err)
	}
	if len(got) != 1 {
		return 0, fmt.Errorf("estimating the room in cluster %s: %d answers", c.Name, len(got))
	}
	return int64(got[0].Replicas), nil
}
