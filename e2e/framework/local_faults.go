package framework

import (
	"context"

	"github.com/karmada-failover/lab/lab/local"
)

// LocalFaults injects faults into the hermetic lab (LAB_PROVIDER=local): a
// member is stopped by stopping its kwokctl processes, and pods are made unready
// by the lab's kwok chaos stage.
type LocalFaults struct {
	Lab *local.Lab
}

// StopCluster crashes the member (SIGKILL to every process of it, its Flink
// JVMs too), or stops it with SIGTERM and grace.
func (f LocalFaults) StopCluster(ctx context.Context, name string, graceful bool) error {
	return f.Lab.StopMember(ctx, name, graceful)
}

// StartCluster starts the member again.
func (f LocalFaults) StartCluster(ctx context.Context, name string) error {
	return f.Lab.StartMember(ctx, name)
}

// Partition partitions (or heals) the member's link: Karmada's connection
// hangs while the member runs on.
func (f LocalFaults) Partition(ctx context.Context, name string, heal bool) error {
	_, err := f.Lab.Partition(ctx, name, heal)
	return err
}

// FailPods labels the pods for the chaos stage (or removes the label with heal).
func (f LocalFaults) FailPods(ctx context.Context, cluster, namespace, selector string, heal bool) error {
	_, err := f.Lab.FailPods(ctx, cluster, namespace, selector, heal)
	return err
}

// StopController stops karmada-controller-manager by PID.
func (f LocalFaults) StopController(_ context.Context, kill bool) error {
	return f.Lab.StopControllerManager(kill)
}

// StartController starts karmada-controller-manager and waits for its health check.
func (f LocalFaults) StartController(ctx context.Context, gates map[string]bool) error {
	return f.Lab.StartControllerManager(ctx, gates)
}

// StarveFlink restarts the member's FlinkDeployment runner without (or with) task slots.
func (f LocalFaults) StarveFlink(ctx context.Context, cluster string, starve bool) error {
	return f.Lab.StarveFlink(ctx, cluster, starve)
}

// Unsupported is "" for every fault: the hermetic lab injects them all.
func (f LocalFaults) Unsupported(Fault) string { return "" }
