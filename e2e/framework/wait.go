package framework

// The e2e suite's waits, in Cluster API's style: WaitForX(ctx, WaitForXInput{...}, intervals...)
// polls with Gomega's Eventually until what a user would observe is there, and returns what the
// spec needs of it. intervals are the spec's timeout and polling interval
// (Config.GetIntervals(spec, key)...). A wait that times out fails the spec, saying what it
// waited for and the last reason it was still waiting.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
)

// DeploymentGVR is the resource of the suite's Deployments, for the waits that read any object.
var DeploymentGVR = appsv1.SchemeGroupVersion.WithResource("deployments")

// WaitForClusterReadyInput is the input of WaitForClusterReady.
type WaitForClusterReadyInput struct {
	Lab     *Lab
	Cluster string
}

// WaitForClusterReady waits until Karmada reports member Cluster Ready (`kubectl get clusters`
// shows READY True).
func WaitForClusterReady(ctx context.Context, input WaitForClusterReadyInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		ready, err := input.Lab.ClusterReady(ctx, input.Cluster)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ready).To(BeTrue(), "cluster %s Ready", input.Cluster)
	}, intervals...).WithContext(ctx).Should(Succeed(), "cluster %s Ready", input.Cluster)
}

// WaitForClusterUntaintedInput is the input of WaitForClusterUntainted.
type WaitForClusterUntaintedInput struct {
	Lab     *Lab
	Cluster string
}

// WaitForClusterUntainted waits until Karmada's Cluster has no NoExecute taint left: nothing
// evicts workloads from it any more.
func WaitForClusterUntainted(ctx context.Context, input WaitForClusterUntaintedInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		taints, err := input.Lab.ClusterNoExecuteTaints(ctx, input.Cluster)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(taints).To(BeEmpty(), "NoExecute taints left on %s", input.Cluster)
	}, intervals...).WithContext(ctx).Should(Succeed(), "NoExecute taints left on %s", input.Cluster)
}

// WaitForClusterNotReadyInput is the input of WaitForClusterNotReady.
type WaitForClusterNotReadyInput struct {
	Lab     *Lab
	Cluster string
	// TaintKey, when set, is a NoExecute taint the Cluster must carry too (NotReadyTaintKey:
	// the lab's ClusterTaintPolicy acted on the NotReady condition).
	TaintKey string
}

// WaitForClusterNotReady waits until Karmada marks member Cluster NotReady (and, with
// TaintKey, taints it NoExecute), as `kubectl get clusters` shows it after the member stopped
// answering.
func WaitForClusterNotReady(ctx context.Context, input WaitForClusterNotReadyInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		ready, err := input.Lab.ClusterReady(ctx, input.Cluster)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ready).To(BeFalse(), "Karmada marks %s NotReady", input.Cluster)
		if input.TaintKey != "" {
			taints, err := input.Lab.ClusterNoExecuteTaints(ctx, input.Cluster)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(taints).To(ContainElement(input.TaintKey), "the NoExecute %s taint on %s", input.TaintKey, input.Cluster)
		}
	}, intervals...).WithContext(ctx).Should(Succeed(), "cluster %s NotReady", input.Cluster)
}

// WaitForClusterRoomInput is the input of WaitForClusterRoom.
type WaitForClusterRoomInput struct {
	Lab      *Lab
	Clusters []string
	// Replicas of the workload, each requesting Requests (WorkloadRequests).
	Replicas int64
	Requests corev1.ResourceList
}

// WaitForClusterRoom waits until Karmada's scheduler sees room for the workload's replicas on
// every cluster, and enough on each that a division by dynamic weights gives each of two
// clusters some (DividesOver): a cluster still freeing an earlier spec's pods would get none.
func WaitForClusterRoom(ctx context.Context, input WaitForClusterRoomInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		room := map[string]int64{}
		for _, c := range input.Clusters {
			n, err := input.Lab.ClusterRoom(ctx, c, input.Requests)
			g.Expect(err).NotTo(HaveOccurred())
			room[c] = n
		}
		g.Expect(DividesOver(room, input.Replicas)).To(Succeed(), "as Karmada's scheduler sees the clusters")
	}, intervals...).WithContext(ctx).Should(Succeed(), "room for %d replicas on %v", input.Replicas, input.Clusters)
}

// WaitForDeploymentPlacedInput is the input of WaitForDeploymentPlaced.
type WaitForDeploymentPlacedInput struct {
	Lab             *Lab
	Namespace, Name string
}

// WaitForDeploymentPlaced waits until the Deployment is healthy in its binding and Available
// on every cluster it is scheduled to, and returns those clusters.
func WaitForDeploymentPlaced(ctx context.Context, input WaitForDeploymentPlacedInput, intervals ...interface{}) []string {
	var clusters []string
	Eventually(func(g Gomega, ctx context.Context) {
		rb, err := GetBinding(ctx, input.Lab.Karmada, input.Namespace, BindingName(input.Name, "Deployment"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(BindingHealthy(rb)).To(Succeed())
		clusters = ScheduledClusters(rb)
		for _, c := range clusters {
			g.Expect(DeploymentAvailable(ctx, input.Lab.Member(c), input.Namespace, input.Name)).To(Succeed())
		}
	}, intervals...).WithContext(ctx).Should(Succeed(), "Deployment %s/%s healthy and Available where it is scheduled", input.Namespace, input.Name)
	return clusters
}

// WaitForDeploymentMovedAwayInput is the input of WaitForDeploymentMovedAway.
type WaitForDeploymentMovedAwayInput struct {
	Lab             *Lab
	Namespace, Name string
	// From is the cluster the Deployment leaves.
	From string
}

// WaitForDeploymentMovedAway waits until no replica of the Deployment is scheduled to From and
// it is Available on every cluster it is scheduled to, and returns those clusters.
func WaitForDeploymentMovedAway(ctx context.Context, input WaitForDeploymentMovedAwayInput, intervals ...interface{}) []string {
	var clusters []string
	Eventually(func(g Gomega, ctx context.Context) {
		rb, err := GetBinding(ctx, input.Lab.Karmada, input.Namespace, BindingName(input.Name, "Deployment"))
		g.Expect(err).NotTo(HaveOccurred())
		clusters = ScheduledClusters(rb)
		g.Expect(clusters).NotTo(BeEmpty())
		g.Expect(clusters).NotTo(ContainElement(input.From))
		for _, c := range clusters {
			g.Expect(DeploymentAvailable(ctx, input.Lab.Member(c), input.Namespace, input.Name)).To(Succeed())
		}
	}, intervals...).WithContext(ctx).Should(Succeed(), "Deployment %s/%s Available away from %s", input.Namespace, input.Name, input.From)
	return clusters
}

// WaitForBindingScheduledInput is the input of WaitForBindingScheduled.
type WaitForBindingScheduledInput struct {
	// Karmada is the Karmada API server.
	Karmada *ClusterProxy
	// Namespace, Name and Kind name the resource template; its binding is BindingName(Name, Kind).
	Namespace, Name, Kind string
	// Away is a cluster the binding must not be scheduled to ("": any).
	Away string
}

// WaitForBindingScheduled waits until the resource's binding is scheduled to one cluster, other
// than Away, and returns it.
func WaitForBindingScheduled(ctx context.Context, input WaitForBindingScheduledInput, intervals ...interface{}) string {
	var cluster string
	Eventually(func(g Gomega, ctx context.Context) {
		rb, err := GetBinding(ctx, input.Karmada, input.Namespace, BindingName(input.Name, input.Kind))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(rb.Spec.Clusters).To(HaveLen(1))
		cluster = rb.Spec.Clusters[0].Name
		g.Expect(cluster).NotTo(Equal(input.Away))
	}, intervals...).WithContext(ctx).Should(Succeed(), "%s %s/%s scheduled to one cluster other than %q", input.Kind, input.Namespace, input.Name, input.Away)
	return cluster
}

// FailoverItem is what one failover history item must hold; an empty field is not checked.
type FailoverItem struct {
	// Before and After are the clusters before and after the failover, in any order.
	Before, After []string
	// State is preserved label state the item must hold (alias label name → value).
	State map[string]string
	// Started: the item has a start time.
	Started bool
}

// WaitForFailoverHistoryInput is the input of WaitForFailoverHistory.
type WaitForFailoverHistoryInput struct {
	// Karmada is the Karmada API server.
	Karmada *ClusterProxy
	// Namespace, Name and Kind name the resource template; its binding is BindingName(Name, Kind).
	Namespace, Name, Kind string
	// Count, when > 0, is how many items the history holds.
	Count int
	// Reason, when set, is the reason of every item.
	Reason workv1alpha2.FailoverReason
	// Items, when set, are the items the history holds, oldest first: Items[i] describes the i-th.
	Items []FailoverItem
	// OldestFirst: no item started before the one before it.
	OldestFirst bool
	// EvictedFrom, when set, are the clusters the items evicted, one each, in any order.
	EvictedFrom []string
	// Check, when set, checks the history further (what only one spec expects of it).
	Check func(g Gomega, history []workv1alpha2.FailoverHistoryItem)
}

// WaitForFailoverHistory waits until the binding's status.failoverHistory holds what the input
// describes, and returns it.
func WaitForFailoverHistory(ctx context.Context, input WaitForFailoverHistoryInput, intervals ...interface{}) []workv1alpha2.FailoverHistoryItem {
	var history []workv1alpha2.FailoverHistoryItem
	binding := BindingName(input.Name, input.Kind)
	Eventually(func(g Gomega, ctx context.Context) {
		rb, err := GetBinding(ctx, input.Karmada, input.Namespace, binding)
		g.Expect(err).NotTo(HaveOccurred())
		history = rb.Status.FailoverHistory
		if input.Count > 0 {
			g.Expect(history).To(HaveLen(input.Count), "failover history items")
		}
		if input.Items != nil {
			g.Expect(history).To(HaveLen(len(input.Items)), "failover history items")
		}
		var evicted []string
		for j, item := range history {
			if input.Reason != "" {
				g.Expect(item.Reason).To(BeEquivalentTo(input.Reason), "item %d", j)
			}
			if j < len(input.Items) {
				want := input.Items[j]
				if want.Before != nil {
					g.Expect(item.ClustersBeforeFailover).To(ConsistOf(want.Before), "item %d", j)
				}
				if want.After != nil {
					g.Expect(item.ClustersAfterFailover).To(ConsistOf(want.After), "item %d", j)
				}
				if want.Started {
					g.Expect(item.StartTime.IsZero()).To(BeFalse(), "item %d has a start time", j)
				}
				for k, v := range want.State {
					g.Expect(item.PreservedLabelState).To(HaveKeyWithValue(k, v), "item %d: the state of each failover stays in the history", j)
				}
			}
			if input.OldestFirst && j > 0 {
				g.Expect(item.StartTime.Before(&history[j-1].StartTime)).To(BeFalse(), "oldest first")
			}
			if input.EvictedFrom != nil {
				g.Expect(item.FromCluster).NotTo(BeEmpty(), "item %d names the cluster it records", j)
				evicted = append(evicted, item.FromCluster)
			}
		}
		if input.EvictedFrom != nil {
			g.Expect(evicted).To(ConsistOf(input.EvictedFrom), "one item per cluster moved away from")
		}
		if input.Check != nil {
			input.Check(g, history)
		}
	}, intervals...).WithContext(ctx).Should(Succeed(), "the failover history of %s/%s", input.Namespace, binding)
	return history
}

// FailoverStage is how far a failover has gone, as a controller that crashes there leaves it.
type FailoverStage string

const (
	// FailoverEvicting: the eviction task exists, the history item does not.
	FailoverEvicting FailoverStage = "evicting"
	// FailoverRecorded: the history item exists, the destination does not carry the marker.
	FailoverRecorded FailoverStage = "recorded"
	// FailoverMarked: the failover is recorded and the destination marked.
	FailoverMarked FailoverStage = "marked"
)

// WaitForFailoverStageInput is the input of WaitForFailoverStage.
type WaitForFailoverStageInput struct {
	Lab *Lab
	// Namespace and Name name the Deployment.
	Namespace, Name string
	// Source and Destination are the clusters the Deployment fails over from and to.
	Source, Destination string
	// Since is when the failure was injected: the failover's history item is one from Source
	// started at Since or later (the API server stamps it in whole seconds).
	Since time.Time
	// Reason is the failover's reason, in the destination's marker.
	Reason workv1alpha2.FailoverReason
	// Stage is how far the failover must have gone.
	Stage FailoverStage
}

// WaitForFailoverStage waits until the failover of the Deployment from Source is at Stage: an
// eviction task from Source and no history item yet; the history item and no marker on the
// Destination's Deployment; or both.
func WaitForFailoverStage(ctx context.Context, input WaitForFailoverStageInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		rb, err := GetBinding(ctx, input.Lab.Karmada, input.Namespace, BindingName(input.Name, "Deployment"))
		g.Expect(err).NotTo(HaveOccurred())
		labels, annotations, err := objectMeta(ctx, input.Lab.Member(input.Destination), DeploymentGVR, input.Namespace, input.Name)
		g.Expect(err).NotTo(HaveOccurred())
		marked := labels[workv1alpha2.FailoverReasonLabel] == string(input.Reason) && annotations[workv1alpha2.FailoverTimeAnnotation] != ""
		if marked {
			at, err := time.Parse(time.RFC3339, annotations[workv1alpha2.FailoverTimeAnnotation])
			if err != nil {
				StopTrying(fmt.Sprintf("failover time %q", annotations[workv1alpha2.FailoverTimeAnnotation])).Wrap(err).Now()
			}
			marked = !at.Before(input.Since)
		}
		ours := failoversFrom(rb.Status.FailoverHistory, input.Source, input.Since)
		switch input.Stage {
		case FailoverEvicting:
			var task bool
			for _, t := range rb.Spec.GracefulEvictionTasks {
				task = task || t.FromCluster == input.Source
			}
			g.Expect(task).To(BeTrue(), "an eviction task from %s", input.Source)
			g.Expect(ours).To(BeEmpty())
		case FailoverRecorded:
			g.Expect(ours).To(HaveLen(1))
			g.Expect(marked).To(BeFalse(), "the marked Work is held")
		case FailoverMarked:
			g.Expect(ours).To(HaveLen(1))
			g.Expect(marked).To(BeTrue(), "%s marked for this failover", input.Destination)
		default:
			StopTrying("unknown failover stage " + string(input.Stage)).Now()
		}
	}, intervals...).WithContext(ctx).Should(Succeed(), "the failover of Deployment %s/%s from %s %s", input.Namespace, input.Name, input.Source, input.Stage)
}

// WaitForFailoverRecordedOnceInput is the input of WaitForFailoverRecordedOnce.
type WaitForFailoverRecordedOnceInput struct {
	Lab *Lab
	// Namespace and Name name the Deployment.
	Namespace, Name string
	// Source and Destination are the clusters the Deployment failed over from and to.
	Source, Destination string
	// Since is when the failure was injected (see WaitForFailoverStageInput).
	Since time.Time
	// Reason is the failover's reason, in the destination's marker.
	Reason workv1alpha2.FailoverReason
}

// WaitForFailoverRecordedOnce waits until the failover of the Deployment from Source is
// recorded exactly once, to Destination, and the Deployment there carries the marker with the
// item's start time; it returns the item.
func WaitForFailoverRecordedOnce(ctx context.Context, input WaitForFailoverRecordedOnceInput, intervals ...interface{}) workv1alpha2.FailoverHistoryItem {
	var item workv1alpha2.FailoverHistoryItem
	Eventually(func(g Gomega, ctx context.Context) {
		rb, err := GetBinding(ctx, input.Lab.Karmada, input.Namespace, BindingName(input.Name, "Deployment"))
		g.Expect(err).NotTo(HaveOccurred())
		items := failoversFrom(rb.Status.FailoverHistory, input.Source, input.Since)
		g.Expect(items).To(HaveLen(1), "the failover from %s recorded once", input.Source)
		item = items[0]
		g.Expect(item.ClustersAfterFailover).To(Equal([]string{input.Destination}))
		labels, annotations, err := objectMeta(ctx, input.Lab.Member(input.Destination), DeploymentGVR, input.Namespace, input.Name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(labels).To(HaveKeyWithValue(workv1alpha2.FailoverReasonLabel, string(input.Reason)))
		g.Expect(annotations).To(HaveKeyWithValue(workv1alpha2.FailoverTimeAnnotation, item.StartTime.UTC().Format(time.RFC3339)))
	}, intervals...).WithContext(ctx).Should(Succeed(), "the failover of Deployment %s/%s from %s to %s recorded once and marked", input.Namespace, input.Name, input.Source, input.Destination)
	return item
}

// failoversFrom are the items of a failover from source started at since or later.
func failoversFrom(history []workv1alpha2.FailoverHistoryItem, source string, since time.Time) []workv1alpha2.FailoverHistoryItem {
	var out []workv1alpha2.FailoverHistoryItem
	for _, item := range history {
		if !item.StartTime.Time.Before(since) && slices.Equal(item.ClustersBeforeFailover, []string{source}) {
			out = append(out, item)
		}
	}
	return out
}

// WaitForEvictionTasksRetiredInput is the input of WaitForEvictionTasksRetired.
type WaitForEvictionTasksRetiredInput struct {
	// Karmada is the Karmada API server.
	Karmada *ClusterProxy
	// Namespace, Name and Kind name the resource template; its binding is BindingName(Name, Kind).
	Namespace, Name, Kind string
	// From, when set, is the cluster whose eviction task must be retired; "": every task.
	From string
}

// WaitForEvictionTasksRetired waits until the binding has no graceful eviction task (from
// From): the failover is over.
func WaitForEvictionTasksRetired(ctx context.Context, input WaitForEvictionTasksRetiredInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		rb, err := GetBinding(ctx, input.Karmada, input.Namespace, BindingName(input.Name, input.Kind))
		g.Expect(err).NotTo(HaveOccurred())
		if input.From == "" {
			g.Expect(rb.Spec.GracefulEvictionTasks).To(BeEmpty())
			return
		}
		for _, t := range rb.Spec.GracefulEvictionTasks {
			g.Expect(t.FromCluster).NotTo(Equal(input.From), "the eviction task from %s is retired", input.From)
		}
	}, intervals...).WithContext(ctx).Should(Succeed(), "the eviction tasks of %s %s/%s retired", input.Kind, input.Namespace, input.Name)
}

// WaitForWorkloadUnhealthyInput is the input of WaitForWorkloadUnhealthy.
type WaitForWorkloadUnhealthyInput struct {
	// Karmada is the Karmada API server.
	Karmada *ClusterProxy
	// Namespace, Name and Kind name the resource template; its binding is BindingName(Name, Kind).
	Namespace, Name, Kind string
	// Clusters is how many clusters report the workload Unhealthy.
	Clusters int
}

// WaitForWorkloadUnhealthy waits until Karmada reports the workload Unhealthy on Clusters
// clusters in its binding's aggregated status, while still within the application failover's
// toleration (no eviction task yet).
func WaitForWorkloadUnhealthy(ctx context.Context, input WaitForWorkloadUnhealthyInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		rb, err := GetBinding(ctx, input.Karmada, input.Namespace, BindingName(input.Name, input.Kind))
		g.Expect(err).NotTo(HaveOccurred())
		unhealthy := 0
		for _, s := range rb.Status.AggregatedStatus {
			if s.Health == workv1alpha2.ResourceUnhealthy {
				unhealthy++
			}
		}
		g.Expect(unhealthy).To(Equal(input.Clusters), "aggregated status: %+v", rb.Status.AggregatedStatus)
		g.Expect(rb.Spec.GracefulEvictionTasks).To(BeEmpty(), "still within the toleration")
	}, intervals...).WithContext(ctx).Should(Succeed(), "%s %s/%s Unhealthy on %d clusters", input.Kind, input.Namespace, input.Name, input.Clusters)
}

// WaitForBindingStatusInput is the input of WaitForBindingStatus.
type WaitForBindingStatusInput struct {
	// Karmada is the Karmada API server.
	Karmada *ClusterProxy
	// Namespace, Name and Kind name the resource template; its binding is BindingName(Name, Kind).
	Namespace, Name, Kind string
	// Cluster is the cluster whose status is read; "": the one cluster the binding is scheduled to.
	Cluster string
	// Contains, when set, is text the status Karmada collected from Cluster must hold (a job id).
	Contains string
	// Healthy: the workload is Healthy on Cluster.
	Healthy bool
}

// WaitForBindingStatus waits until the binding's aggregated status has Cluster's status, as the
// input describes it, and returns Cluster.
func WaitForBindingStatus(ctx context.Context, input WaitForBindingStatusInput, intervals ...interface{}) string {
	var cluster string
	Eventually(func(g Gomega, ctx context.Context) {
		rb, err := GetBinding(ctx, input.Karmada, input.Namespace, BindingName(input.Name, input.Kind))
		g.Expect(err).NotTo(HaveOccurred())
		cluster = input.Cluster
		if cluster == "" {
			g.Expect(rb.Spec.Clusters).To(HaveLen(1))
			cluster = rb.Spec.Clusters[0].Name
		}
		var found bool
		for _, s := range rb.Status.AggregatedStatus {
			if s.ClusterName != cluster || (input.Contains != "" && s.Status == nil) {
				continue
			}
			found = true
			if input.Contains != "" {
				g.Expect(string(s.Status.Raw)).To(ContainSubstring(input.Contains))
			}
			if input.Healthy {
				g.Expect(s.Health).To(BeEquivalentTo(workv1alpha2.ResourceHealthy), "%s %s healthy on %s", input.Kind, input.Name, cluster)
			}
		}
		g.Expect(found).To(BeTrue(), "no status of %s in the binding's aggregatedStatus", cluster)
	}, intervals...).WithContext(ctx).Should(Succeed(), "the status of %s %s/%s from %q in its binding", input.Kind, input.Namespace, input.Name, input.Cluster)
	return cluster
}

// WaitForBindingConditionInput is the input of WaitForBindingCondition.
type WaitForBindingConditionInput struct {
	// Karmada is the Karmada API server.
	Karmada *ClusterProxy
	// Namespace, Name and Kind name the resource template; its binding is BindingName(Name, Kind).
	Namespace, Name, Kind string
	// Type is the condition's type.
	Type string
	// Absent: wait for the condition to be gone instead.
	Absent bool
}

// WaitForBindingCondition waits until the binding has the condition Type (or, with Absent, no
// longer has it), and returns it (nil with Absent).
func WaitForBindingCondition(ctx context.Context, input WaitForBindingConditionInput, intervals ...interface{}) *metav1.Condition {
	var cond *metav1.Condition
	Eventually(func(g Gomega, ctx context.Context) {
		rb, err := GetBinding(ctx, input.Karmada, input.Namespace, BindingName(input.Name, input.Kind))
		g.Expect(err).NotTo(HaveOccurred())
		cond = meta.FindStatusCondition(rb.Status.Conditions, input.Type)
		if input.Absent {
			g.Expect(cond).To(BeNil(), "the condition %s is removed once the workload is gone", input.Type)
		} else {
			g.Expect(cond).NotTo(BeNil(), "condition %s on the binding", input.Type)
		}
	}, intervals...).WithContext(ctx).Should(Succeed(), "condition %s on the binding of %s %s/%s (absent: %t)", input.Type, input.Kind, input.Namespace, input.Name, input.Absent)
	return cond
}

// WaitForFailoverMarkerInput is the input of WaitForFailoverMarker.
type WaitForFailoverMarkerInput struct {
	// Getter is the destination member.
	Getter *ClusterProxy
	// GVR, Namespace and Name name the object there (DeploymentGVR for the suite's Deployments).
	GVR             schema.GroupVersionResource
	Namespace, Name string
	// Reason is the marker's reason; From and Time, when set, its source and time annotations.
	Reason     workv1alpha2.FailoverReason
	From, Time string
}

// WaitForFailoverMarker waits until the object on the destination carries Karmada's failover
// marker: the reason label, and the source and time annotations.
func WaitForFailoverMarker(ctx context.Context, input WaitForFailoverMarkerInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		labels, annotations, err := objectMeta(ctx, input.Getter, input.GVR, input.Namespace, input.Name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(labels).To(HaveKeyWithValue(workv1alpha2.FailoverReasonLabel, string(input.Reason)))
		if input.From != "" {
			g.Expect(annotations).To(HaveKeyWithValue(workv1alpha2.FailoverFromAnnotation, input.From))
		}
		if input.Time != "" {
			g.Expect(annotations).To(HaveKeyWithValue(workv1alpha2.FailoverTimeAnnotation, input.Time))
		}
	}, intervals...).WithContext(ctx).Should(Succeed(), "the failover marker on %s %s/%s in %s", input.GVR.Resource, input.Namespace, input.Name, input.Getter.Name)
}

// WaitForPreservedStateRemovedInput is the input of WaitForPreservedStateRemoved.
type WaitForPreservedStateRemovedInput struct {
	// Getter is the destination member.
	Getter *ClusterProxy
	// GVR, Namespace and Name name the object there.
	GVR             schema.GroupVersionResource
	Namespace, Name string
	// StateKeys are the labels of the preserved state (the rules' alias label names).
	StateKeys []string
}

// WaitForPreservedStateRemoved waits until Karmada completed the failover on the destination:
// the object keeps the failover marker and no longer carries the preserved state, nor the list
// of its keys.
func WaitForPreservedStateRemoved(ctx context.Context, input WaitForPreservedStateRemovedInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		obj, err := input.Getter.Dynamic().Resource(input.GVR).Namespace(input.Namespace).Get(ctx, input.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(obj.GetLabels()).To(HaveKey(workv1alpha2.FailoverReasonLabel), "the marker stays")
		for _, k := range input.StateKeys {
			g.Expect(obj.GetLabels()).NotTo(HaveKey(k), "no preserved state once the failover is complete")
		}
		g.Expect(obj.GetAnnotations()).NotTo(HaveKey(workv1alpha2.FailoverPreservedKeysAnnotation))
	}, intervals...).WithContext(ctx).Should(Succeed(), "the preserved state removed from %s %s/%s in %s", input.GVR.Resource, input.Namespace, input.Name, input.Getter.Name)
}

// objectMeta returns the labels and annotations of an object, or nil maps if it is not there.
func objectMeta(ctx context.Context, p *ClusterProxy, gvr schema.GroupVersionResource, namespace, name string) (map[string]string, map[string]string, error) {
	obj, err := p.Dynamic().Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return obj.GetLabels(), obj.GetAnnotations(), nil
}

// ClusterRoleGVR is the resource of ClusterRoles.
var ClusterRoleGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}

// WaitForClusterRolePlacedInput is the input of WaitForClusterRolePlaced.
type WaitForClusterRolePlacedInput struct {
	Lab *Lab
	// Name of the ClusterRole; its binding is the ClusterResourceBinding BindingName(Name, "ClusterRole").
	Name string
}

// WaitForClusterRolePlaced waits until the ClusterRole's ClusterResourceBinding is scheduled to
// one cluster and the ClusterRole is there, and returns that cluster.
func WaitForClusterRolePlaced(ctx context.Context, input WaitForClusterRolePlacedInput, intervals ...interface{}) string {
	var cluster string
	crbName := BindingName(input.Name, "ClusterRole")
	Eventually(func(g Gomega, ctx context.Context) {
		crb, err := input.Lab.Karmada.Failover().WorkV1alpha2().ClusterResourceBindings().Get(ctx, crbName, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(crb.Spec.Clusters).To(HaveLen(1))
		cluster = crb.Spec.Clusters[0].Name
		_, err = input.Lab.Member(cluster).Kube().RbacV1().ClusterRoles().Get(ctx, input.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	}, intervals...).WithContext(ctx).Should(Succeed(), "ClusterRole %s placed on one cluster", input.Name)
	return cluster
}

// WaitForClusterRoleFailoverInput is the input of WaitForClusterRoleFailover.
type WaitForClusterRoleFailoverInput struct {
	Lab *Lab
	// Name of the ClusterRole.
	Name string
	// Source is the cluster it fails over from.
	Source string
}

// WaitForClusterRoleFailover waits until the ClusterRole failed over from Source to one other
// cluster: the ClusterResourceBinding scheduled there with one ClusterFailure history item from
// Source to it, and the ClusterRole there with the failover marker. It returns the destination.
func WaitForClusterRoleFailover(ctx context.Context, input WaitForClusterRoleFailoverInput, intervals ...interface{}) string {
	var dest string
	crbName := BindingName(input.Name, "ClusterRole")
	Eventually(func(g Gomega, ctx context.Context) {
		crb, err := input.Lab.Karmada.Failover().WorkV1alpha2().ClusterResourceBindings().Get(ctx, crbName, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(crb.Spec.Clusters).To(HaveLen(1))
		dest = crb.Spec.Clusters[0].Name
		g.Expect(dest).NotTo(Equal(input.Source))
		g.Expect(crb.Status.FailoverHistory).To(HaveLen(1))
		g.Expect(crb.Status.FailoverHistory[0].Reason).To(BeEquivalentTo("ClusterFailure"))
		g.Expect(crb.Status.FailoverHistory[0].ClustersBeforeFailover).To(Equal([]string{input.Source}))
		g.Expect(crb.Status.FailoverHistory[0].ClustersAfterFailover).To(Equal([]string{dest}))
		cr, err := input.Lab.Member(dest).Kube().RbacV1().ClusterRoles().Get(ctx, input.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cr.Labels).To(HaveKeyWithValue(workv1alpha2.FailoverReasonLabel, "ClusterFailure"))
		g.Expect(cr.Annotations).To(HaveKeyWithValue(workv1alpha2.FailoverFromAnnotation, input.Source))
	}, intervals...).WithContext(ctx).Should(Succeed(), "ClusterRole %s failed over from %s", input.Name, input.Source)
	return dest
}

// WaitForObjectDeletedInput is the input of WaitForObjectDeleted.
type WaitForObjectDeletedInput struct {
	// Getter is the cluster the object is deleted from.
	Getter *ClusterProxy
	// GVR, Namespace ("" for a cluster-scoped object) and Name name the object.
	GVR             schema.GroupVersionResource
	Namespace, Name string
}

// WaitForObjectDeleted waits until the object is gone from the cluster (`kubectl get` says
// NotFound): Karmada cleaned it up there.
func WaitForObjectDeleted(ctx context.Context, input WaitForObjectDeletedInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		_, err := input.Getter.Dynamic().Resource(input.GVR).Namespace(input.Namespace).Get(ctx, input.Name, metav1.GetOptions{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s %s still on %s (err %v)", input.GVR.Resource, input.Name, input.Getter.Name, err)
	}, intervals...).WithContext(ctx).Should(Succeed(), "%s %s/%s removed from %s", input.GVR.Resource, input.Namespace, input.Name, input.Getter.Name)
}

// WaitForObjectTerminatingInput is the input of WaitForObjectTerminating.
type WaitForObjectTerminatingInput struct {
	Getter *ClusterProxy
	// GVR, Namespace and Name name the object.
	GVR             schema.GroupVersionResource
	Namespace, Name string
	// Finalizer is the finalizer that holds the deletion.
	Finalizer string
}

// WaitForObjectTerminating waits until the object is being deleted and Finalizer holds it
// (`kubectl get` shows it Terminating), and returns its deletion time.
func WaitForObjectTerminating(ctx context.Context, input WaitForObjectTerminatingInput, intervals ...interface{}) time.Time {
	var deleting time.Time
	Eventually(func(g Gomega, ctx context.Context) {
		obj, err := input.Getter.Dynamic().Resource(input.GVR).Namespace(input.Namespace).Get(ctx, input.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(obj.GetDeletionTimestamp()).NotTo(BeNil(), "being deleted on %s", input.Getter.Name)
		g.Expect(obj.GetFinalizers()).To(ContainElement(input.Finalizer))
		deleting = obj.GetDeletionTimestamp().Time
	}, intervals...).WithContext(ctx).Should(Succeed(), "%s %s/%s terminating on %s, held by %s", input.GVR.Resource, input.Namespace, input.Name, input.Getter.Name, input.Finalizer)
	return deleting
}

// WaitForNamespaceInput is the input of WaitForNamespace.
type WaitForNamespaceInput struct {
	Getter *ClusterProxy
	Name   string
}

// WaitForNamespace waits until the namespace exists in the cluster (Karmada propagates the
// spec's namespace to every member).
func WaitForNamespace(ctx context.Context, input WaitForNamespaceInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		_, err := input.Getter.Kube().CoreV1().Namespaces().Get(ctx, input.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	}, intervals...).WithContext(ctx).Should(Succeed(), "namespace %s in %s", input.Name, input.Getter.Name)
}

// WaitForEventInput is the input of WaitForEvent.
type WaitForEventInput struct {
	// Getter is the cluster the Event is recorded in.
	Getter    *ClusterProxy
	Namespace string
	// InvolvedKind and InvolvedName, when set, are the kind and name of the object the Event is about.
	InvolvedKind, InvolvedName string
	// Type (Normal, Warning) and Reason of the Event.
	Type, Reason string
	// MessageContains are texts the Event's message holds.
	MessageContains []string
}

// WaitForEvent waits until the namespace has an Event as the input describes it (`kubectl
// get events` lists it), and returns it.
func WaitForEvent(ctx context.Context, input WaitForEventInput, intervals ...interface{}) corev1.Event {
	var found corev1.Event
	Eventually(func(g Gomega, ctx context.Context) {
		opts := metav1.ListOptions{}
		if input.InvolvedName != "" {
			opts.FieldSelector = "involvedObject.name=" + input.InvolvedName
		}
		evs, err := input.Getter.Kube().CoreV1().Events(input.Namespace).List(ctx, opts)
		g.Expect(err).NotTo(HaveOccurred())
		var matched bool
		var seen []string
		for _, ev := range evs.Items {
			if ev.Reason != input.Reason || (input.InvolvedKind != "" && ev.InvolvedObject.Kind != input.InvolvedKind) ||
				(input.InvolvedName != "" && ev.InvolvedObject.Name != input.InvolvedName) {
				continue
			}
			if ev.Type == input.Type && containsAll(ev.Message, input.MessageContains) {
				found, matched = ev, true
				break
			}
			seen = append(seen, ev.Type+": "+ev.Message)
		}
		g.Expect(matched).To(BeTrue(), "no %s %s Event on %s %s naming %q (others of that reason: %q)",
			input.Type, input.Reason, input.InvolvedKind, input.InvolvedName, input.MessageContains, seen)
	}, intervals...).WithContext(ctx).Should(Succeed(), "a %s %s Event in %s/%s", input.Type, input.Reason, input.Getter.Name, input.Namespace)
	return found
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// WaitForPodsWaitingInput is the input of WaitForPodsWaiting.
type WaitForPodsWaitingInput struct {
	// Getter is the member the pods run in.
	Getter              *ClusterProxy
	Namespace, Selector string
	// Reasons are the waiting reasons of a container, any of which counts (ErrImagePull, ImagePullBackOff).
	Reasons []string
}

// WaitForPodsWaiting waits until a container of the pods matching Selector waits for one of
// Reasons, as `kubectl get pods` shows it, and returns the counts of every waiting reason.
func WaitForPodsWaiting(ctx context.Context, input WaitForPodsWaitingInput, intervals ...interface{}) map[string]int {
	var reasons map[string]int
	Eventually(func(g Gomega, ctx context.Context) {
		var err error
		reasons, err = PodWaitingReasons(ctx, input.Getter, input.Namespace, input.Selector)
		g.Expect(err).NotTo(HaveOccurred())
		n := 0
		for _, r := range input.Reasons {
			n += reasons[r]
		}
		g.Expect(n).To(BeNumerically(">", 0), "pods waiting on %s: %v", input.Getter.Name, reasons)
	}, intervals...).WithContext(ctx).Should(Succeed(), "pods %s in %s/%s waiting for %v", input.Selector, input.Getter.Name, input.Namespace, input.Reasons)
	return reasons
}

// WaitForFailoverHistoryStoredInput is the input of WaitForFailoverHistoryStored.
type WaitForFailoverHistoryStoredInput struct {
	// Karmada is the Karmada API server.
	Karmada *ClusterProxy
	// Namespace, Name and Kind name a resource template whose binding exists; its binding is
	// BindingName(Name, Kind).
	Namespace, Name, Kind string
	// Stored is what to wait for: the API server stores status.failoverHistory (true), or prunes it.
	Stored bool
}

// WaitForFailoverHistoryStored waits until the Karmada API server stores status.failoverHistory of
// ResourceBindings (Stored), or prunes it, as a server-side dry run of a status write with one more
// history item tells: the API server returns the object as it would store it, and stores nothing.
// A CRD change takes effect in the API server a moment after the write of the CRD.
func WaitForFailoverHistoryStored(ctx context.Context, input WaitForFailoverHistoryStoredInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		rb, err := GetBinding(ctx, input.Karmada, input.Namespace, BindingName(input.Name, input.Kind))
		g.Expect(err).NotTo(HaveOccurred())
		probe := workv1alpha2.FailoverHistoryItem{
			StartTime: metav1.NewTime(time.Now().Truncate(time.Second)), Reason: workv1alpha2.FailoverReason("DryRunProbe"),
			FromCluster: "dry-run-probe", Producer: "e2e", ClustersBeforeFailover: []string{"dry-run-probe"},
		}
		rb.Status.FailoverHistory = append(rb.Status.FailoverHistory, probe)
		got := &workv1alpha2.ResourceBinding{}
		err = input.Karmada.Failover().WorkV1alpha2().RESTClient().Put().Namespace(input.Namespace).Resource("resourcebindings").
			Name(rb.Name).SubResource("status").Param("dryRun", metav1.DryRunAll).Body(rb).Do(ctx).Into(got)
		g.Expect(err).NotTo(HaveOccurred(), "a dry run of a status write")
		stored := len(got.Status.FailoverHistory) > 0 && got.Status.FailoverHistory[len(got.Status.FailoverHistory)-1].FromCluster == probe.FromCluster
		g.Expect(stored).To(Equal(input.Stored), "the API server stores status.failoverHistory")
	}, intervals...).WithContext(ctx).Should(Succeed(), "the API server stores status.failoverHistory: %t", input.Stored)
}

// WaitForHoldEnforcedInput is the input of WaitForHoldEnforced.
type WaitForHoldEnforcedInput struct {
	// Write makes a write the hold must deny (a dry run) and returns the API server's answer.
	Write func(ctx context.Context) error
	// What the write is, for the failure message.
	What string
}

// WaitForHoldEnforced waits until the API server denies Write with the Hold's message: the
// ValidatingAdmissionPolicy installed by NewHold is in force.
func WaitForHoldEnforced(ctx context.Context, input WaitForHoldEnforcedInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		err := input.Write(ctx)
		g.Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)).To(BeTrue(), "the hold denies %s (got %v)", input.What, err)
		g.Expect(err.Error()).To(ContainSubstring(holdMessage))
	}, intervals...).WithContext(ctx).Should(Succeed(), "the hold of %s in force", input.What)
}

// WaitForCheckpointStoreInput is the input of WaitForCheckpointStore.
type WaitForCheckpointStoreInput struct {
	// Store holds the endpoint and the credentials of the requests.
	Store          *CheckpointStore
	Bucket, Prefix string
}

// WaitForCheckpointStore waits until the checkpoint store takes the requests a Flink job and the
// restore path make, signed with Store's credentials (CheckpointStore.Probe).
func WaitForCheckpointStore(ctx context.Context, input WaitForCheckpointStoreInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		g.Expect(input.Store.Probe(ctx, input.Bucket, input.Prefix)).To(Succeed())
	}, intervals...).WithContext(ctx).Should(Succeed(), "the store takes the requests of the clients that were running before it stopped")
}
