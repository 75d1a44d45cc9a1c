package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/kind"
)

// KindFaults injects faults into the kind lab (LAB_PROVIDER=kind): a member
// fails when its node container is stopped; karmada-controller-manager is a
// Deployment of the host cluster (context karmada-host of karmada.config).
type KindFaults struct {
	Lab  *kind.Lab
	Host *ClusterProxy
}

// NewKindFaults connects to the host cluster of the kind lab.
func NewKindFaults(l *kind.Lab) (*KindFaults, error) {
	host, err := NewClusterProxy("karmada-host", l.Cfg.KarmadaKubeconfig(), "karmada-host")
	if err != nil {
		return nil, err
	}
	return &KindFaults{Lab: l, Host: host}, nil
}

const controllerManager = "karmada-controller-manager"

// StopCluster kills (or, graceful, stops) the member's node container.
func (f *KindFaults) StopCluster(ctx context.Context, name string, graceful bool) error {
	return f.Lab.StopMember(ctx, name, graceful)
}

// StartCluster starts the node container and waits for the API server.
func (f *KindFaults) StartCluster(ctx context.Context, name string) error {
	return f.Lab.StartMember(ctx, name)
}

// Partition disconnects (or reconnects) the member's node container from the
// kind network.
func (f *KindFaults) Partition(ctx context.Context, name string, heal bool) error {
	return f.Lab.Partition(ctx, name, heal)
}

// FailPods is not available: the kind lab's pods are real containers.
func (f *KindFaults) FailPods(context.Context, string, string, string, bool) error {
	return fmt.Errorf("kind lab: %s", f.Unsupported(FaultFailPods))
}

// StarveFlink is not available on the kind lab.
func (f *KindFaults) StarveFlink(context.Context, string, bool) error {
	return fmt.Errorf("kind lab: %s", f.Unsupported(FaultStarveFlink))
}

// Unsupported names the faults of the hermetic lab the kind lab has no
// counterpart for.
func (f *KindFaults) Unsupported(fault Fault) string {
	switch fault {
	case FaultFailPods:
		return "making pods unready is done by the hermetic lab's kwok chaos stage; kind runs real containers"
	case FaultStarveFlink, FaultFlinkRunner:
		return "the Flink scenarios read the hermetic lab's FlinkDeployment runner (REST address in status.clusterInfo); on kind, apply the rendered flink-demo.yaml and follow README's kind lab section"
	}
	return ""
}

// StopController scales karmada-controller-manager to zero; kill deletes its
// pods at once (grace period 0), like a crash.
func (f *KindFaults) StopController(ctx context.Context, kill bool) error {
	deps := f.Host.Kube().AppsV1().Deployments("karmada-system")
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deps.Get(ctx, controllerManager, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Replicas = ptr.To(int32(0))
		_, err = deps.Update(ctx, d, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return err
	}
	pods := f.Host.Kube().CoreV1().Pods("karmada-system")
	sel := metav1.ListOptions{LabelSelector: "app=" + controllerManager}
	if kill {
		if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}, sel); err != nil {
			return err
		}
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := pods.List(ctx, sel)
		return err == nil && len(l.Items) == 0, nil
	})
}

// StartController sets the feature gates (nil: the lab's own) and scales
// karmada-controller-manager back to one replica, then waits until it is available.
func (f *KindFaults) StartController(ctx context.Context, gates map[string]bool) error {
	flag := "--feature-gates=" + config.FeatureGatesFlag(config.FeatureGates(f.Lab.Cfg.Karmada, gates))
	deps := f.Host.Kube().AppsV1().Deployments("karmada-system")
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deps.Get(ctx, controllerManager, metav1.GetOptions{})
		if err != nil {
			return err
		}
		setArg(&d.Spec.Template.Spec.Containers[0], flag)
		d.Spec.Replicas = ptr.To(int32(1))
		_, err = deps.Update(ctx, d, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 2*time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := deps.Get(ctx, controllerManager, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return deploymentRolledOut(d), nil
	})
}

// setArg replaces the container's --name=... argument (in command or args) or
// appends it to args. karmadactl init puts the flags in the command.
func setArg(c *corev1.Container, arg string) {
	name, _, _ := strings.Cut(arg, "=")
	for _, list := range []*[]string{&c.Command, &c.Args} {
		for i, a := range *list {
			if a == name || strings.HasPrefix(a, name+"=") {
				(*list)[i] = arg
				return
			}
		}
	}
	c.Args = append(c.Args, arg)
}

func deploymentRolledOut(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == ptr.Deref(d.Spec.Replicas, 1) &&
		d.Status.AvailableReplicas == ptr.Deref(d.Spec.Replicas, 1) && d.Status.Replicas == d.Status.UpdatedReplicas
}
