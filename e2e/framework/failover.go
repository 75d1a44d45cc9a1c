package framework

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
)

// FailoverInput is the input of WaitForFailover.
type FailoverInput struct {
	Lab *Lab
	// Namespace, Name and Kind name the resource template; its binding is BindingName(Name, Kind).
	Namespace, Name, Kind string
	// Source is the cluster the workload fails over from.
	Source string
	// Timeout and Polling bound the wait (Config.Timeout and Config.Polling of the spec's interval).
	Timeout, Polling time.Duration
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

// WaitForFailover follows a single-cluster workload's binding from in.Source to another
// cluster, until in.Arrived accepts the workload there. It fails with the last reason it was
// still waiting for when in.Timeout passes.
func WaitForFailover(ctx context.Context, in FailoverInput) (FailoverResult, error) {
	var res FailoverResult
	var last error
	mark := func(label string) {
		if in.Timeline != nil {
			in.Timeline.Mark(label)
		}
	}
	binding := BindingName(in.Name, in.Kind)
	err := wait.PollUntilContextTimeout(ctx, in.Polling, in.Timeout, true, func(ctx context.Context) (bool, error) {
		if ready, err := in.Lab.ClusterReady(ctx, in.Source); err == nil && !ready {
			mark(in.Source + " NotReady")
		}
		rb, err := GetBinding(ctx, in.Lab.Karmada, in.Namespace, binding)
		if err != nil {
			last = err
			return false, nil
		}
		for _, s := range rb.Status.AggregatedStatus {
			if s.ClusterName == in.Source && s.Health == workv1alpha2.ResourceUnhealthy {
				mark(in.Kind + " Unhealthy on " + in.Source)
			}
		}
		for _, t := range rb.Spec.GracefulEvictionTasks {
			if t.FromCluster == in.Source {
				mark("eviction task for " + in.Source)
			}
		}
		clusters := ScheduledClusters(rb)
		if len(clusters) != 1 || clusters[0] == in.Source {
			last = fmt.Errorf("binding %s/%s scheduled to %v, not to one cluster other than %s", in.Namespace, binding, clusters, in.Source)
			return false, nil
		}
		mark("scheduled to " + clusters[0])
		if err := in.Arrived(ctx, clusters[0]); err != nil {
			last = fmt.Errorf("on %s: %w", clusters[0], err)
			return false, nil
		}
		res = FailoverResult{Destination: clusters[0], Binding: rb}
		return true, nil
	})
	if err != nil {
		return res, fmt.Errorf("%s %s/%s did not fail over from %s within %s: %w (%v)", in.Kind, in.Namespace, in.Name, in.Source, in.Timeout, last, err)
	}
	return res, nil
}
