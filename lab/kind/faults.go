package kind

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/karmada-failover/lab/lab/internal/poll"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/karmada-failover/lab/lab"
)

// flinkRunsRecorded tells whether the running lab's members run the lab's
// FlinkDeployment runner (its record says so).
func (l *Lab) flinkRunsRecorded() bool {
	st, err := l.State()
	return err == nil && st.FlinkRunner
}

// FailPods makes the pods matching selector in namespace of member unready while their
// containers keep running, as an application whose readiness probe fails: it runs
// lab.WorkloadUnready in each pod's container through the member API server's exec (heal:
// lab.WorkloadReady), which fails (passes) the container's readiness probe
// (lab.WorkloadProbe), and returns once the kubelet reports every pod not Ready (Ready).
// Only the e2e suite's workload (lab.WorkloadImage) has that probe: pods without it are
// refused, since nothing the lab does would make them unready.
func (l *Lab) FailPods(ctx context.Context, member, namespace, selector string, heal bool) (int, error) {
	if selector == "" {
		return 0, fmt.Errorf("a label selector is required (e.g. app=web)")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", l.kubeconfigOf(member))
	if err != nil {
		return 0, fmt.Errorf("member %s: %w", member, err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return 0, err
	}
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return 0, fmt.Errorf("listing pods %q in %s/%s: %w", selector, member, namespace, err)
	}
	if len(pods.Items) == 0 {
		return 0, fmt.Errorf("no pods match %q in namespace %s of %s", selector, namespace, member)
	}
	command := lab.WorkloadUnready
	if heal {
		command = lab.WorkloadReady
	}
	for _, p := range pods.Items {
		c, ok := workloadContainer(&p)
		if !ok {
			return 0, fmt.Errorf("pod %s/%s in %s has no container with the readiness probe %q (image %s): the lab cannot make it unready",
				namespace, p.Name, member, strings.Join(lab.WorkloadProbe, " "), lab.WorkloadImage)
		}
		if out, err := podExec(ctx, rc, cs, namespace, p.Name, c, command); err != nil {
			return 0, fmt.Errorf("%s in pod %s/%s of %s: %w: %s", strings.Join(command, " "), namespace, p.Name, member, err, out)
		}
	}
	names := map[string]bool{}
	for _, p := range pods.Items {
		names[p.Name] = true
	}
	// Within two probe periods of the workload's probe, and the kubelet's status update.
	want := map[bool]string{true: "Ready", false: "not Ready"}[heal]
	err = poll.Until(ctx, 90*time.Second, time.Second, fmt.Sprintf("pods %q in %s/%s %s", selector, member, namespace, want), func(ctx context.Context) (bool, error) {
		list, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		for _, p := range list.Items {
			if names[p.Name] && p.DeletionTimestamp == nil && podReady(&p) == heal {
				continue
			}
			if names[p.Name] && p.DeletionTimestamp == nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return 0, err
	}
	return len(pods.Items), nil
}

// workloadContainer is the container of p whose readiness probe is lab.WorkloadProbe.
func workloadContainer(p *corev1.Pod) (string, bool) {
	for _, c := range p.Spec.Containers {
		if c.ReadinessProbe != nil && c.ReadinessProbe.Exec != nil && slices.Equal(c.ReadinessProbe.Exec.Command, lab.WorkloadProbe) {
			return c.Name, true
		}
	}
	return "", false
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podExec runs command in container of pod namespace/name through the API server (as
// kubectl exec does) and returns its output.
func podExec(ctx context.Context, rc *rest.Config, cs kubernetes.Interface, namespace, name, container string, command []string) (string, error) {
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(name).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	exec, err := remotecommand.NewSPDYExecutor(rc, "POST", req.URL())
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &out})
	return strings.TrimSpace(out.String()), err
}

// checkpointStoreNamespace holds the S3 store's Deployment (MinIO or SeaweedFS) on the host cluster.
const checkpointStoreNamespace = "checkpoint-store"

// StarveFlink restarts member's FlinkDeployment runner with no task slots
// (starve) or with Flink's default, as on the hermetic lab: its Deployment is
// re-applied with the new --task-slots and rolled out (Recreate: the old runner
// stops its job pods first), and the new runner recovers each job under its
// id, starved jobs staying CREATED.
func (l *Lab) StarveFlink(ctx context.Context, member string, starve bool) error {
	if err := lab.Supports(l, lab.FaultStarveFlink); err != nil {
		return err
	}
	if _, err := l.Cfg.Member(member); err != nil {
		return err
	}
	slots := -1
	if starve {
		slots = 0
	}
	if err := l.applyRunner(ctx, member, slots); err != nil {
		return err
	}
	return l.waitRunner(ctx, member)
}

// hostClient is a client of the host cluster (context karmada-host of karmada.config), where
// Karmada's control plane runs.
func (l *Lab) hostClient() (kubernetes.Interface, error) {
	k, err := newKube(l.Cfg.KarmadaKubeconfig(), "karmada-host")
	if err != nil {
		return nil, err
	}
	return k.cs, nil
}

// scaleDeployment sets a Deployment's replicas (and applies change to it
// first, if given), retrying on conflicts.
func scaleDeployment(ctx context.Context, c kubernetes.Interface, ns, name string, replicas int32, change func(*appsv1.Deployment)) error {
	deps := c.AppsV1().Deployments(ns)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deps.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if change != nil {
			change(d)
		}
		d.Spec.Replicas = ptr.To(replicas)
		_, err = deps.Update(ctx, d, metav1.UpdateOptions{})
		return err
	})
}

// waitPodsGone waits up to 2 minutes until no pod matches sel in ns.
func waitPodsGone(ctx context.Context, c kubernetes.Interface, ns string, sel metav1.ListOptions) error {
	return poll.Until(ctx, 2*time.Minute, time.Second, fmt.Sprintf("no pod %q in %s", sel.LabelSelector, ns), func(ctx context.Context) (bool, error) {
		list, err := c.CoreV1().Pods(ns).List(ctx, sel)
		if err != nil {
			return false, err
		}
		return len(list.Items) == 0, nil
	})
}

// waitRolledOut waits up to 3 minutes until the Deployment is rolled out.
func waitRolledOut(ctx context.Context, c kubernetes.Interface, ns, name string) error {
	return poll.Until(ctx, 3*time.Minute, 2*time.Second, fmt.Sprintf("Deployment %s/%s rolled out", ns, name), func(ctx context.Context) (bool, error) {
		d, err := c.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
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
