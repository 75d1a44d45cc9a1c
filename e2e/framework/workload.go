package framework

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/lab"
)

// NotReadyTaintKey is the taint the lab's ClusterTaintPolicy puts on a NotReady cluster.
const NotReadyTaintKey = "cluster.karmada.io/not-ready"

// OutOfServiceTaintKey is the patched Karmada's cluster taint with which an
// operator or a fencing automation asserts that a cluster's workloads are
// stopped (clusterv1alpha1.TaintClusterOutOfService): Karmada then hands their
// preserved state over and completes a purge mode Directly failover without
// waiting for the cluster to return.
const OutOfServiceTaintKey = "cluster.karmada.io/out-of-service"

// CreateNamespace creates a namespace in Karmada; Karmada's namespace
// controller propagates it to every member.
func CreateNamespace(ctx context.Context, k *ClusterProxy, prefix string) (string, error) {
	ns, err := k.Kube().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return ns.Name, nil
}

// DeleteNamespace deletes a namespace from Karmada (and so from the members).
func DeleteNamespace(ctx context.Context, k *ClusterProxy, name string) error {
	err := k.Kube().CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// WorkloadRequests are the resources each replica of NewDeployment requests.
var WorkloadRequests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}

// NewDeployment is a small Deployment whose pods kwok's fake nodes (or the
// kind lab's kubelets) run: the lab's workload (lab.WorkloadImage), ready while
// its readiness probe passes, which the kind lab's FailPods makes fail.
func NewDeployment(namespace, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: lab.WorkloadImage,
					ReadinessProbe: &corev1.Probe{
						ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: lab.WorkloadProbe}},
						PeriodSeconds: 2, FailureThreshold: 1, SuccessThreshold: 1, TimeoutSeconds: 2,
					},
					Resources: corev1.ResourceRequirements{Requests: WorkloadRequests.DeepCopy()},
				}}},
			},
		},
	}
}

// PolicyInput describes the PropagationPolicy of a scenario.
type PolicyInput struct {
	Namespace, Name string
	// Target is the Deployment the policy selects.
	Target string
	// Clusters are the candidate clusters; the first placement picks one of them
	// unless Divided is set.
	Clusters []string
	// Divided spreads the replicas over two clusters (Divided, Aggregated) instead
	// of placing the whole workload on one.
	Divided bool
	// DividedMinGroups is the least number of clusters a Divided workload may be
	// spread over (default 2, the number of clusters it is spread over at first): 1
	// lets it fail over to a single cluster when two fail at once.
	DividedMinGroups int
	// TolerationSeconds after a NoExecute not-ready taint (cluster failover) or
	// an unhealthy application (application failover) before eviction.
	TolerationSeconds int32
	// ClusterFailover and ApplicationFailover enable the two failover kinds.
	ClusterFailover, ApplicationFailover bool
	PurgeMode                            policyv1alpha1.PurgeMode
	// StateRules are StatePreservation rules: alias label name -> JSONPath.
	StateRules map[string]string
}

// NewPropagationPolicy builds the scenario's policy.
func NewPropagationPolicy(in PolicyInput) *policyv1alpha1.PropagationPolicy {
	p := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: in.Namespace, Name: in.Name},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: in.Target}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: in.Clusters},
				ClusterTolerations: []corev1.Toleration{{
					Key: NotReadyTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute,
					TolerationSeconds: ptr.To(int64(in.TolerationSeconds)),
				}},
			},
		},
	}
	if in.Divided {
		// Weighted by available replicas over the two clusters the spread constraint
		// selects (Aggregated would pack the replicas into one cluster when it has room
		// for all of them; static weights ignore spread constraints). A cluster without
		// room gets none: a spec that needs both waits for room first (ClusterRoom).
		p.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
			ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
			WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas},
		}
		minGroups := 2
		if in.DividedMinGroups > 0 {
			minGroups = in.DividedMinGroups
		}
		p.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: minGroups, MaxGroups: 2}}
	} else {
		p.Spec.Placement.ReplicaScheduling = &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}
		p.Spec.Placement.SpreadConstraints = []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 1}}
	}
	var state *policyv1alpha1.StatePreservation
	if len(in.StateRules) > 0 {
		state = &policyv1alpha1.StatePreservation{}
		for alias, path := range in.StateRules {
			state.Rules = append(state.Rules, policyv1alpha1.StatePreservationRule{AliasLabelName: alias, JSONPath: path})
		}
	}
	purge := in.PurgeMode
	if purge == "" {
		purge = policyv1alpha1.PurgeModeDirectly
	}
	if in.ClusterFailover || in.ApplicationFailover {
		p.Spec.Failover = &policyv1alpha1.FailoverBehavior{}
	}
	if in.ClusterFailover {
		p.Spec.Failover.Cluster = &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: purge, StatePreservation: state}
	}
	if in.ApplicationFailover {
		// Karmada's webhook requires dependencies to follow an application that fails over.
		p.Spec.PropagateDeps = true
		p.Spec.Failover.Application = &policyv1alpha1.ApplicationFailoverBehavior{
			DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To(in.TolerationSeconds)},
			PurgeMode:          purge,
			StatePreservation:  state,
		}
		if purge == policyv1alpha1.PurgeModeGracefully {
			p.Spec.Failover.Application.GracePeriodSeconds = ptr.To(int32(60))
		}
	}
	return p
}

// BindingName is the name Karmada gives the ResourceBinding of a resource.
func BindingName(name, kind string) string { return name + "-" + strings.ToLower(kind) }

// GetBinding reads a ResourceBinding through the patched API (failoverHistory included).
func GetBinding(ctx context.Context, k *ClusterProxy, namespace, name string) (*workv1alpha2.ResourceBinding, error) {
	return k.Failover().WorkV1alpha2().ResourceBindings(namespace).Get(ctx, name, metav1.GetOptions{})
}

// ScheduledClusters lists the clusters in a binding's spec.clusters.
func ScheduledClusters(rb *workv1alpha2.ResourceBinding) []string {
	var out []string
	for _, c := range rb.Spec.Clusters {
		out = append(out, c.Name)
	}
	return out
}

// BindingHealthy reports whether every scheduled cluster reports the workload
// Healthy and applied in the binding's aggregated status.
func BindingHealthy(rb *workv1alpha2.ResourceBinding) error {
	if len(rb.Spec.Clusters) == 0 {
		return fmt.Errorf("binding %s is not scheduled", rb.Name)
	}
	health := map[string]workv1alpha2.AggregatedStatusItem{}
	for _, s := range rb.Status.AggregatedStatus {
		health[s.ClusterName] = s
	}
	for _, c := range rb.Spec.Clusters {
		s, ok := health[c.Name]
		if !ok {
			return fmt.Errorf("no status from %s yet", c.Name)
		}
		if !s.Applied || s.Health != workv1alpha2.ResourceHealthy {
			return fmt.Errorf("%s: applied=%t health=%s", c.Name, s.Applied, s.Health)
		}
	}
	return nil
}

// DeploymentAvailable checks a Deployment in a member: all replicas updated and available.
func DeploymentAvailable(ctx context.Context, m *ClusterProxy, namespace, name string) error {
	d, err := m.Kube().AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if d.Status.ObservedGeneration < d.Generation || d.Status.AvailableReplicas != want || d.Status.UpdatedReplicas != want {
		return fmt.Errorf("%s in %s: %d/%d available, %d updated", name, m.Name, d.Status.AvailableReplicas, want, d.Status.UpdatedReplicas)
	}
	return nil
}

// NewUnpullableImagePolicy is the OverridePolicy Karmada's own e2e suite uses
// to make an application unhealthy in some clusters: it replaces the registry
// of the target Deployment's images with "fake" there, an image no node can
// pull (the hermetic lab's kwok stages treat `fake/` as missing, a kubelet
// fails to pull it).
func NewUnpullableImagePolicy(namespace, name, target string, clusters []string) *policyv1alpha1.OverridePolicy {
	return &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: policyv1alpha1.OverrideSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: target}},
			OverrideRules: []policyv1alpha1.RuleWithCluster{{
				TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: clusters},
				Overriders: policyv1alpha1.Overriders{ImageOverrider: []policyv1alpha1.ImageOverrider{{
					Component: policyv1alpha1.Registry, Operator: policyv1alpha1.OverriderOpReplace, Value: "fake",
				}}},
			}},
		},
	}
}

// PodWaitingReasons counts the containers of the pods matching selector in a
// member by the reason they are waiting for (ErrImagePull, ImagePullBackOff,
// CrashLoopBackOff, ...), as `kubectl get pods` shows it.
func PodWaitingReasons(ctx context.Context, m *ClusterProxy, namespace, selector string) (map[string]int, error) {
	pods, err := m.Kube().CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, p := range pods.Items {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Waiting != nil {
				out[cs.State.Waiting.Reason]++
			}
		}
	}
	return out, nil
}
