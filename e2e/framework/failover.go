package framework

import (
	"context"

	. "github.com/onsi/gomega"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
)

// WaitForFailoverInput is the input of WaitForFailover.
type WaitForFailoverInput struct {
	Lab *Lab
	// Namespace, Name and Kind name the resource template; its binding is BindingName(Name, Kind).
	Namespace, Name, Kind string
	// Source is the cluster the workload fails over from.
	Source string
	// Timeline, when set, gets the moments a user would see: the source NotReady, the
	// workload Unhealthy there, the eviction task, the scheduling to the destination.
	Timeline *Timeline
	// Arrived checks the workload on the destination (applied, available, running...) and
	// returns nil once it is there; it is retried until it does.
	Arrived func(ctx context.Context, dest string) error
}

// FailoverResult is what WaitForFailover observed.
type FailoverResult struct {
	// Destination is the one cluster the binding is scheduled to after the failover.
	Destination string
	// Binding is the binding as it was when the workload arrived.
	Binding *workv1alpha2.ResourceBinding
}

// WaitForFailover follows a single-cluster workload's binding from Source to another
// cluster, until Arrived accepts the workload there, and returns the destination. It fails
// with the last reason it was still waiting for when the intervals' timeout passes.
func WaitForFailover(ctx context.Context, input WaitForFailoverInput, intervals ...interface{}) FailoverResult {
	var res FailoverResult
	mark := func(label string) {
		if input.Timeline != nil {
			input.Timeline.Mark(label)
		}
	}
	binding := BindingName(input.Name, input.Kind)
	Eventually(func(g Gomega, ctx context.Context) {
		if ready, err := input.Lab.ClusterReady(ctx, input.Source); err == nil && !ready {
			mark(input.Source + " NotReady")
		}
		rb, err := GetBinding(ctx, input.Lab.Karmada, input.Namespace, binding)
		g.Expect(err).NotTo(HaveOccurred())
		for _, s := range rb.Status.AggregatedStatus {
			if s.ClusterName == input.Source && s.Health == workv1alpha2.ResourceUnhealthy {
				mark(input.Kind + " Unhealthy on " + input.Source)
			}
		}
		for _, t := range rb.Spec.GracefulEvictionTasks {
			if t.FromCluster == input.Source {
				mark("eviction task for " + input.Source)
			}
		}
		clusters := ScheduledClusters(rb)
		g.Expect(len(clusters) == 1 && clusters[0] != input.Source).To(BeTrue(),
			"binding %s/%s scheduled to %v, not to one cluster other than %s", input.Namespace, binding, clusters, input.Source)
		mark("scheduled to " + clusters[0])
		g.Expect(input.Arrived(ctx, clusters[0])).To(Succeed(), "on %s", clusters[0])
		res = FailoverResult{Destination: clusters[0], Binding: rb}
	}, intervals...).WithContext(ctx).Should(Succeed(), "%s %s/%s failed over from %s", input.Kind, input.Namespace, input.Name, input.Source)
	return res
}
