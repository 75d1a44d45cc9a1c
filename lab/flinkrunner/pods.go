package flinkrunner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/karmada-failover/lab/lab/internal/poll"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/karmada-failover/lab/apis/flink"
)

// Pods of the PodExecutor: named and labelled as flink-kubernetes-operator
// names a FlinkDeployment's JobManager (labels app, component, type), with
// the REST Service the operator creates, <name>-rest, port "rest".
const (
	// RESTPortInPod is the REST port of a job pod (Flink's default).
	RESTPortInPod = 8081
	// MainContainer is the operator's name of the Flink container.
	MainContainer = "flink-main-container"
	// LabelApp, LabelComponent and LabelType are the operator's labels of a JobManager pod.
	LabelApp       = "app"
	LabelComponent = "component"
	LabelType      = "type"
	// LabelUID is the FlinkDeployment's UID on its job pod: a re-created
	// object's runner never takes the old object's pod for its own.
	LabelUID = "lab.flinkrunner/flinkdeployment-uid"
	// CredentialsSecret is the Secret, in each job's namespace, the runner
	// copies its S3 keys (PodExecutor.SecretEnv) into for the job pods.
	CredentialsSecret = "flink-runner-credentials"
)

// JobPodName is the name of FlinkDeployment name's job pod. It is fixed: a
// new JobManager of the object can only be created once the previous one is
// gone, so a member never runs two of them for one object.
func JobPodName(name string) string { return name + "-jobmanager" }

// RESTServiceName is the operator's REST Service of FlinkDeployment name.
func RESTServiceName(name string) string { return name + "-rest" }

// PodExecutor runs each job in a pod of its own in the runner's member (the
// kind lab), from Image, which holds a JVM and the lab's job jar: one pod per
// FlinkDeployment, restartPolicy Never (the runner, like the operator's
// JobManager recovery, decides how a job comes back), owned by its
// FlinkDeployment, with the <name>-rest Service in front of it. A pod dies
// with its node: a member crash is a JobManager crash.
type PodExecutor struct {
	Kube  kubernetes.Interface
	Image string
	// HostPaths are host directories mounted into every job pod at the same
	// path (DirectoryOrCreate): the lab's committed-output folder, which
	// outlives the member.
	HostPaths []string
	// SecretEnv is put in a Secret of the job's namespace (CredentialsSecret)
	// and into the job's environment from there: the S3 keys, which must not
	// appear in a pod spec, a command line or Flink's configuration.
	SecretEnv map[string]string
	// RunAsUser/RunAsGroup, when set, run the job as that user (the owner of HostPaths).
	RunAsUser, RunAsGroup *int64
	// Resources of the Flink container (none: best effort).
	Resources corev1.ResourceRequirements
	// Grace is the job pod's termination grace period (20 s).
	Grace time.Duration
	// Poll is how often a pod's state is read (1 s).
	Poll time.Duration
}

func (e *PodExecutor) Name() string       { return "pod" }
func (e *PodExecutor) Port() (int, error) { return RESTPortInPod, nil }
func (e *PodExecutor) Release(int)        {}
func (e *PodExecutor) poll() time.Duration {
	if e.Poll > 0 {
		return e.Poll
	}
	return time.Second
}

// Bind: every interface of the pod; advertised under the REST Service's name.
func (e *PodExecutor) Bind(d *Deployment) (string, string) {
	return "0.0.0.0", RESTServiceName(d.Name) + "." + d.Namespace + ".svc"
}

// Labels are the labels of d's job pod, the REST Service's selector without LabelUID.
func podLabels(d *Deployment) map[string]string {
	return map[string]string{LabelApp: d.Name, LabelComponent: "jobmanager", LabelType: "flink-native-kubernetes", LabelUID: d.UID}
}

func ownerRef(d *Deployment) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{APIVersion: flink.GroupVersion.String(), Kind: flink.Kind, Name: d.Name, UID: types.UID(d.UID), Controller: &t}
}

// JobPod is the pod that runs l for d.
func (e *PodExecutor) JobPod(d *Deployment, l *Launch) *corev1.Pod {
	grace := e.Grace
	if grace <= 0 {
		grace = 20 * time.Second
	}
	graceSeconds := int64(grace / time.Second)
	noLinks := false
	c := corev1.Container{
		Name:            MainContainer,
		Image:           e.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         append([]string(nil), l.Argv...),
		Ports:           []corev1.ContainerPort{{Name: "rest", ContainerPort: RESTPortInPod, Protocol: corev1.ProtocolTCP}},
		Resources:       e.Resources,
	}
	keys := make([]string, 0, len(e.SecretEnv))
	for k := range e.SecretEnv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c.Env = append(c.Env, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: CredentialsSecret}, Key: k}}})
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: JobPodName(d.Name), Namespace: d.Namespace, Labels: podLabels(d),
			Annotations:     map[string]string{"lab.flinkrunner/job-id": l.JobID, "lab.flinkrunner/restored-from": l.SavepointPath},
			OwnerReferences: []metav1.OwnerReference{ownerRef(d)}},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &graceSeconds,
			EnableServiceLinks:            &noLinks,
			AutomountServiceAccountToken:  &noLinks,
		},
	}
	if e.RunAsUser != nil || e.RunAsGroup != nil {
		pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: e.RunAsUser, RunAsGroup: e.RunAsGroup}
	}
	hostType := corev1.HostPathDirectoryOrCreate
	for i, p := range e.HostPaths {
		name := "host-" + strconv.Itoa(i)
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name,
			VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: p, Type: &hostType}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: p})
	}
	pod.Spec.Containers = []corev1.Container{c}
	return pod
}

// RESTService is the operator's <name>-rest Service of d.
func RESTService(d *Deployment) *corev1.Service {
	sel := podLabels(d)
	delete(sel, LabelUID)
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: RESTServiceName(d.Name), Namespace: d.Namespace,
			Labels: map[string]string{LabelApp: d.Name, LabelType: "flink-native-kubernetes"}, OwnerReferences: []metav1.OwnerReference{ownerRef(d)}},
		Spec: corev1.ServiceSpec{Selector: sel, Ports: []corev1.ServicePort{{Name: "rest", Port: RESTPortInPod,
			TargetPort: intstr.FromString("rest"), Protocol: corev1.ProtocolTCP}}},
	}
}

// Start creates d's REST Service and credentials Secret (kept), removes a job
// pod left from before (a runner that stopped without stopping it, a member
// that crashed), and creates the job pod.
func (e *PodExecutor) Start(ctx context.Context, d *Deployment, l *Launch, _ int) (Process, error) {
	if err := e.ensureSecret(ctx, d.Namespace); err != nil {
		return nil, err
	}
	if err := e.ensureService(ctx, d); err != nil {
		return nil, err
	}
	name := JobPodName(d.Name)
	if err := e.deleteAndWait(ctx, d.Namespace, name, "", 0); err != nil {
		return nil, fmt.Errorf("the previous job pod %s/%s: %w", d.Namespace, name, err)
	}
	pod, err := e.Kube.CoreV1().Pods(d.Namespace).Create(ctx, e.JobPod(d, l), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating the job pod %s/%s: %w", d.Namespace, name, err)
	}
	p := &podProcess{e: e, ns: d.Namespace, name: name, uid: pod.UID, done: make(chan struct{})}
	watchCtx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go p.watch(watchCtx)
	return p, nil
}

// ensureService creates d's REST Service; one left by an earlier object of
// the same name (owned by it, so the garbage collector would take it away) is
// replaced.
func (e *PodExecutor) ensureService(ctx context.Context, d *Deployment) error {
	svc := RESTService(d)
	services := e.Kube.CoreV1().Services(d.Namespace)
	for attempt := 0; attempt < 3; attempt++ {
		_, err := services.Create(ctx, svc, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return fmt.Errorf("service %s/%s: %w", d.Namespace, svc.Name, err)
			}
			return nil
		}
		have, err := services.Get(ctx, svc.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("service %s/%s: %w", d.Namespace, svc.Name, err)
		}
		for _, o := range have.OwnerReferences {
			if o.UID == types.UID(d.UID) {
				return nil
			}
		}
		uid := have.UID
		if err := services.Delete(ctx, svc.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("replacing service %s/%s of an earlier object: %w", d.Namespace, svc.Name, err)
		}
	}
	return fmt.Errorf("service %s/%s: still owned by an earlier object", d.Namespace, svc.Name)
}

func (e *PodExecutor) ensureSecret(ctx context.Context, ns string) error {
	if len(e.SecretEnv) == 0 {
		return nil
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: CredentialsSecret, Namespace: ns,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "flink-runner"}}, StringData: e.SecretEnv}
	secrets := e.Kube.CoreV1().Secrets(ns)
	_, err := secrets.Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("secret %s/%s: %w", ns, CredentialsSecret, err)
	}
	return nil
}

// deleteAndWait deletes pod ns/name (of uid, when set) with grace and waits
// until it is gone; a pod already gone is fine.
func (e *PodExecutor) deleteAndWait(ctx context.Context, ns, name string, uid types.UID, grace time.Duration) error {
	pods := e.Kube.CoreV1().Pods(ns)
	g := int64(grace / time.Second)
	opts := metav1.DeleteOptions{GracePeriodSeconds: &g}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err := pods.Delete(ctx, name, opts)
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or another pod of that name (not ours)
	}
	if err != nil {
		return err
	}
	klog.InfoS("Deleting job pod", "pod", ns+"/"+name, "grace", grace)
	return poll.Until(ctx, grace+time.Minute, 500*time.Millisecond, "job pod "+ns+"/"+name+" deleted", func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return uid != "" && p.UID != uid, nil
	})
}

// podProcess is one job pod.
type podProcess struct {
	e        *PodExecutor
	ns, name string
	uid      types.UID
	cancel   context.CancelFunc
	done     chan struct{}

	mu       sync.Mutex
	ip       string
	exitText string
	exited   bool
}

// watch reads the pod every Poll until it has failed, succeeded or gone.
func (p *podProcess) watch(ctx context.Context) {
	pods := p.e.Kube.CoreV1().Pods(p.ns)
	t := time.NewTicker(p.e.poll())
	defer t.Stop()
	for {
		pod, err := pods.Get(ctx, p.name, metav1.GetOptions{})
		switch {
		case ctx.Err() != nil:
			return
		case apierrors.IsNotFound(err) || (err == nil && pod.UID != p.uid):
			p.end("the pod is gone")
			return
		case err != nil:
			// The API server unreachable says nothing about the pod: ask again.
		case pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded:
			p.end(podExitText(pod))
			return
		default:
			p.mu.Lock()
			p.ip = pod.Status.PodIP
			p.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (p *podProcess) end(text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return
	}
	p.exited, p.exitText = true, text
	close(p.done)
}

// podExitText says how a pod's Flink container ended.
func podExitText(pod *corev1.Pod) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && cs.Name == MainContainer {
			s := fmt.Sprintf("pod %s: container %s exited with code %d", pod.Status.Phase, cs.Name, t.ExitCode)
			if t.Reason != "" {
				s += " (" + t.Reason + ")"
			}
			return s
		}
	}
	s := "pod " + string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		s += ": " + pod.Status.Reason
	}
	if pod.Status.Message != "" {
		s += ": " + pod.Status.Message
	}
	return s
}

func (p *podProcess) Done() <-chan struct{} { return p.done }
func (p *podProcess) Exited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}
func (p *podProcess) ExitText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitText
}
func (p *podProcess) PID() int      { return 0 }
func (p *podProcess) Where() string { return "pod " + p.ns + "/" + p.name }

// RESTBase is the pod's IP, port rest (the runner runs in the member's pod network).
func (p *podProcess) RESTBase() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ip == "" {
		return ""
	}
	return "http://" + p.ip + ":" + strconv.Itoa(RESTPortInPod)
}

// Stop deletes the pod with grace (the kubelet's SIGTERM, then SIGKILL) and
// waits until it is gone.
func (p *podProcess) Stop(grace time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), grace+2*time.Minute)
	defer cancel()
	if err := p.e.deleteAndWait(ctx, p.ns, p.name, p.uid, grace); err != nil {
		klog.ErrorS(err, "Stopping job pod", "pod", p.ns+"/"+p.name)
	}
	p.cancel()
	p.end("the pod was deleted")
	return false
}

// LogTail reads the last n lines of the Flink container's log.
func (p *podProcess) LogTail(n int) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lines := int64(n)
	b, err := p.e.Kube.CoreV1().Pods(p.ns).GetLogs(p.name, &corev1.PodLogOptions{Container: MainContainer, TailLines: &lines}).DoRaw(ctx)
	if err != nil {
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return "(no log: " + status.Status().Message + ")"
		}
		return "(no log: " + err.Error() + ")"
	}
	return strings.TrimRight(string(b), "\n")
}
