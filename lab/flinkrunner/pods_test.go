package flinkrunner

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func podDeployment() *Deployment {
	return &Deployment{Namespace: "team-a", Name: "seq", UID: "uid-1"}
}

// A job pod is the operator's JobManager in shape: its name and labels, the
// Flink container running the launch's command line, the REST port and the
// <name>-rest Service, the S3 keys only through the Secret, the output folder
// at the same path, and no restarts by the kubelet.
func TestPodExecutorStart(t *testing.T) {
	kube := fake.NewClientset()
	ex := &PodExecutor{Kube: kube, Image: "failover-lab/flink:test", HostPaths: []string{"/lab/out"},
		SecretEnv: map[string]string{"AWS_SECRET_ACCESS_KEY": "s3cr3t", "AWS_ACCESS_KEY_ID": "key"}, Poll: 10 * time.Millisecond}
	d := podDeployment()
	l := &Launch{Argv: []string{"java", "-cp", "/opt/flink/usrlib/job.jar", DefaultMainClass, "--conf", "rest.port=8081"}, JobID: "abc"}
	p, err := ex.Start(context.Background(), d, l, RESTPortInPod)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := kube.CoreV1().Pods("team-a").Get(context.Background(), "seq-jobmanager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %s, want Never", pod.Spec.RestartPolicy)
	}
	if pod.Labels[LabelApp] != "seq" || pod.Labels[LabelComponent] != "jobmanager" || pod.Labels[LabelUID] != "uid-1" {
		t.Errorf("labels %v", pod.Labels)
	}
	if len(pod.OwnerReferences) != 1 || pod.OwnerReferences[0].UID != "uid-1" {
		t.Errorf("owner %v, want the FlinkDeployment", pod.OwnerReferences)
	}
	c := pod.Spec.Containers[0]
	if c.Name != MainContainer || strings.Join(c.Command, " ") != strings.Join(l.Argv, " ") {
		t.Errorf("container %s %v", c.Name, c.Command)
	}
	spec := pod.String()
	if strings.Contains(spec, "s3cr3t") {
		t.Errorf("the secret key is in the pod spec")
	}
	if len(c.Env) != 2 || c.Env[0].ValueFrom.SecretKeyRef.Name != CredentialsSecret {
		t.Errorf("env %v, want both keys from %s", c.Env, CredentialsSecret)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/lab/out" || pod.Spec.Volumes[0].HostPath.Path != "/lab/out" {
		t.Errorf("mounts %v volumes %v", c.VolumeMounts, pod.Spec.Volumes)
	}
	sec, err := kube.CoreV1().Secrets("team-a").Get(context.Background(), CredentialsSecret, metav1.GetOptions{})
	if err != nil || sec.StringData["AWS_SECRET_ACCESS_KEY"] != "s3cr3t" {
		t.Errorf("secret %v, %v", sec, err)
	}
	svc, err := kube.CoreV1().Services("team-a").Get(context.Background(), "seq-rest", metav1.GetOptions{})
	if err != nil || svc.Spec.Ports[0].Name != "rest" || svc.Spec.Selector[LabelApp] != "seq" || svc.Spec.Selector[LabelUID] != "" {
		t.Errorf("service %v, %v", svc, err)
	}
	if p.RESTBase() != "" {
		t.Errorf("REST base %q before the pod has an IP", p.RESTBase())
	}

	// Running with an IP: the runner reaches it there.
	pod.Status.Phase, pod.Status.PodIP = corev1.PodRunning, "10.244.0.7"
	if _, err := kube.CoreV1().Pods("team-a").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return p.RESTBase() == "http://10.244.0.7:8081" })

	// The container dies (the JVM's exit, a node crash): the process has ended, and says how.
	pod.Status.Phase = corev1.PodFailed
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: MainContainer,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}}}
	if _, err := kube.CoreV1().Pods("team-a").UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a failed pod did not end the process")
	}
	if !p.Exited() || !strings.Contains(p.ExitText(), "exited with code 137 (Error)") {
		t.Errorf("exit %q", p.ExitText())
	}

	// The next deployment replaces the failed pod; the old one is gone first.
	p2, err := ex.Start(context.Background(), d, l, RESTPortInPod)
	if err != nil {
		t.Fatal(err)
	}
	newPod, err := kube.CoreV1().Pods("team-a").Get(context.Background(), "seq-jobmanager", metav1.GetOptions{})
	if err != nil || newPod.Status.Phase == corev1.PodFailed {
		t.Fatalf("the new pod: %v %v", newPod, err)
	}
	p2.Stop(time.Second)
	if _, err := kube.CoreV1().Pods("team-a").Get(context.Background(), "seq-jobmanager", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after Stop the pod is still there: %v", err)
	}
	if !p2.Exited() {
		t.Error("after Stop the process has not ended")
	}
}

// A pod deleted by someone else (kubectl delete, the namespace's deletion)
// ends the process.
func TestPodExecutorPodGone(t *testing.T) {
	kube := fake.NewClientset()
	ex := &PodExecutor{Kube: kube, Image: "img", Poll: 10 * time.Millisecond}
	p, err := ex.Start(context.Background(), podDeployment(), &Launch{Argv: []string{"java"}}, RESTPortInPod)
	if err != nil {
		t.Fatal(err)
	}
	if err := kube.CoreV1().Pods("team-a").Delete(context.Background(), "seq-jobmanager", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a deleted pod did not end the process")
	}
	if p.ExitText() != "the pod is gone" {
		t.Errorf("exit %q", p.ExitText())
	}
}

// A re-created FlinkDeployment (same name, new UID) gets its own REST Service:
// the earlier object's, which the garbage collector would remove with it, is replaced.
func TestPodExecutorReplacesAnEarlierObjectsService(t *testing.T) {
	kube := fake.NewClientset()
	ex := &PodExecutor{Kube: kube, Image: "img", Poll: 10 * time.Millisecond}
	old := podDeployment()
	if _, err := ex.Start(context.Background(), old, &Launch{Argv: []string{"java"}}, RESTPortInPod); err != nil {
		t.Fatal(err)
	}
	recreated := podDeployment()
	recreated.UID = "uid-2"
	if _, err := ex.Start(context.Background(), recreated, &Launch{Argv: []string{"java"}}, RESTPortInPod); err != nil {
		t.Fatal(err)
	}
	svc, err := kube.CoreV1().Services("team-a").Get(context.Background(), "seq-rest", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.OwnerReferences) != 1 || svc.OwnerReferences[0].UID != "uid-2" {
		t.Errorf("the service's owner is %v, want the re-created object", svc.OwnerReferences)
	}
}

func TestPodExecutorBind(t *testing.T) {
	bind, adv := (&PodExecutor{}).Bind(podDeployment())
	if bind != "0.0.0.0" || adv != "seq-rest.team-a.svc" {
		t.Errorf("bind %s advertise %s", bind, adv)
	}
	l, err := BuildLaunch(LaunchConfig{DefaultJar: "/opt/flink/usrlib/failover-lab-flink-job.jar", RESTAddress: (&PodExecutor{}).Bind,
		FileExists: func(string) bool { return true }}, &Deployment{Namespace: "team-a", Name: "seq", Job: &JobSpec{}}, RESTPortInPod, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if l.Conf[KeyRestBindAddress] != "0.0.0.0" || l.Conf[KeyRestAddress] != "seq-rest.team-a.svc" || l.Conf[KeyRestPort] != "8081" {
		t.Errorf("conf %v", l.Conf)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
