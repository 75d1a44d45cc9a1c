package framework

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	karmadafake "github.com/karmada-io/karmada/pkg/generated/clientset/versioned/fake"

	"github.com/karmada-failover/lab/apis/flink"
	failoverfake "github.com/karmada-failover/lab/apis/generated/clientset/versioned/fake"
	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/lab/flinkrunner"
)

// The waits of wait.go and wait_flink.go against fake clients: each returns what it waited for
// once the condition holds (also when it comes to hold while the wait polls), and fails, saying
// what it waited for and why it still waited, when it does not hold within the intervals.

// quick are the intervals of a wait expected to fail: it gives up after a few polls.
var quick = []interface{}{300 * time.Millisecond, 10 * time.Millisecond}

// patient are the intervals of a wait expected to succeed.
var patient = []interface{}{5 * time.Second, 10 * time.Millisecond}

// waitFailures runs f with the package-level Gomega reporting to t, and returns the failures
// of the waits in f instead of failing t.
func waitFailures(t *testing.T, f func()) []string {
	t.Helper()
	RegisterTestingT(t)
	return InterceptGomegaFailures(f)
}

// expectFailure checks that a wait failed once, with a message holding each of want.
func expectFailure(t *testing.T, failures []string, want ...string) {
	t.Helper()
	if len(failures) != 1 {
		t.Fatalf("want one failure, got %d: %q", len(failures), failures)
	}
	for _, w := range want {
		if !strings.Contains(failures[0], w) {
			t.Errorf("the failure does not say %q:\n%s", w, failures[0])
		}
	}
}

// fakeLab is a lab of fake clients: Karmada (clusters, bindings, events) and members (objects
// of any resource, Deployments, events).
type fakeLab struct {
	*Lab
	failover *failoverfake.Clientset
	karmada  *karmadafake.Clientset
	kube     *kubefake.Clientset
	members  map[string]*fakeMember
}

type fakeMember struct {
	kube *kubefake.Clientset
	dyn  *dynamicfake.FakeDynamicClient
}

func newFakeLab(members ...string) *fakeLab {
	f := &fakeLab{failover: failoverfake.NewSimpleClientset(), karmada: karmadafake.NewSimpleClientset(),
		kube: kubefake.NewSimpleClientset(), members: map[string]*fakeMember{}}
	f.Lab = &Lab{Karmada: &ClusterProxy{Name: "karmada", karmada: f.karmada, failover: f.failover, kube: f.kube},
		Members: map[string]*ClusterProxy{}}
	scheme := runtime.NewScheme()
	_ = appsv1.AddToScheme(scheme)
	for _, m := range members {
		fm := &fakeMember{kube: kubefake.NewSimpleClientset(),
			dyn: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{flink.GVR: flink.Kind + "List"})}
		f.members[m] = fm
		f.Members[m] = &ClusterProxy{Name: m, kube: fm.kube, dyn: fm.dyn}
	}
	return f
}

func (f *fakeLab) addCluster(t *testing.T, name string, ready bool, taints ...string) {
	t.Helper()
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	status := metav1.ConditionFalse
	if ready {
		status = metav1.ConditionTrue
	}
	c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: status}}
	for _, k := range taints {
		c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: k, Effect: corev1.TaintEffectNoExecute})
	}
	if _, err := f.karmada.ClusterV1alpha1().Clusters().Create(context.Background(), c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (f *fakeLab) addBinding(t *testing.T, rb *workv1alpha2.ResourceBinding) {
	t.Helper()
	if err := f.failover.Tracker().Add(rb); err != nil {
		t.Fatal(err)
	}
}

// updateBinding changes a binding of the fake lab (the patched API's client only reads).
func (f *fakeLab) updateBinding(rb *workv1alpha2.ResourceBinding) error {
	return f.failover.Tracker().Update(workv1alpha2.SchemeGroupVersion.WithResource("resourcebindings"), rb, rb.Namespace)
}

// later runs f after a moment, while a wait polls.
func later(t *testing.T, f func() error) {
	go func() {
		time.Sleep(50 * time.Millisecond)
		if err := f(); err != nil {
			t.Error(err)
		}
	}()
}

func binding(name, kind string, clusters ...string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: BindingName(name, kind)}}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c})
	}
	return rb
}

func TestWaitForClusterReady(t *testing.T) {
	f := newFakeLab()
	f.addCluster(t, "member1", true)
	f.addCluster(t, "member2", false)
	RegisterTestingT(t)
	WaitForClusterReady(context.Background(), WaitForClusterReadyInput{Lab: f.Lab, Cluster: "member1"}, patient...)

	expectFailure(t, waitFailures(t, func() {
		WaitForClusterReady(context.Background(), WaitForClusterReadyInput{Lab: f.Lab, Cluster: "member2"}, quick...)
	}), "cluster member2 Ready", "Expected\n    <bool>: false\nto be true")
}

func TestWaitForClusterNotReadyWantsTheTaintToo(t *testing.T) {
	f := newFakeLab()
	f.addCluster(t, "member1", false, NotReadyTaintKey)
	f.addCluster(t, "member2", false)
	RegisterTestingT(t)
	WaitForClusterNotReady(context.Background(), WaitForClusterNotReadyInput{Lab: f.Lab, Cluster: "member1", TaintKey: NotReadyTaintKey}, patient...)

	expectFailure(t, waitFailures(t, func() {
		WaitForClusterNotReady(context.Background(), WaitForClusterNotReadyInput{Lab: f.Lab, Cluster: "member2", TaintKey: NotReadyTaintKey}, quick...)
	}), "cluster member2 NotReady", "the NoExecute "+NotReadyTaintKey+" taint on member2")
}

// availableDeployment is Deployment ns/web in a member with available of its 2 replicas.
func availableDeployment(available int32) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(2))},
		Status: appsv1.DeploymentStatus{AvailableReplicas: available, UpdatedReplicas: 2}}
}

func TestWaitForDeploymentPlaced(t *testing.T) {
	f := newFakeLab("member1", "member2")
	rb := binding("web", "Deployment", "member1")
	rb.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "member1", Applied: true, Health: workv1alpha2.ResourceHealthy}}
	f.addBinding(t, rb)
	if _, err := f.members["member1"].kube.AppsV1().Deployments("ns").Create(context.Background(), availableDeployment(1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectFailure(t, waitFailures(t, func() {
		WaitForDeploymentPlaced(context.Background(), WaitForDeploymentPlacedInput{Lab: f.Lab, Namespace: "ns", Name: "web"}, quick...)
	}), "Deployment ns/web healthy and Available where it is scheduled", "web in member1: 1/2 available")

	later(t, func() error {
		_, err := f.members["member1"].kube.AppsV1().Deployments("ns").UpdateStatus(context.Background(), availableDeployment(2), metav1.UpdateOptions{})
		return err
	})
	RegisterTestingT(t)
	got := WaitForDeploymentPlaced(context.Background(), WaitForDeploymentPlacedInput{Lab: f.Lab, Namespace: "ns", Name: "web"}, patient...)
	if len(got) != 1 || got[0] != "member1" {
		t.Fatalf("placed on %v, want [member1]", got)
	}
}

func TestWaitForFailoverHistory(t *testing.T) {
	f := newFakeLab()
	rb := binding("web", "Deployment", "member2")
	f.addBinding(t, rb)
	later(t, func() error {
		recorded := rb.DeepCopy()
		recorded.Status.FailoverHistory = []workv1alpha2.FailoverHistoryItem{{Reason: "ClusterFailure", StartTime: metav1.Now(),
			ClustersBeforeFailover: []string{"member1"}, ClustersAfterFailover: []string{"member2"},
			PreservedLabelState: map[string]string{"replicas": "2"}}}
		return f.updateBinding(recorded)
	})
	in := WaitForFailoverHistoryInput{Karmada: f.Karmada, Namespace: "ns", Name: "web", Kind: "Deployment", Reason: "ClusterFailure",
		Items: []FailoverItem{{Before: []string{"member1"}, After: []string{"member2"}, Started: true, State: map[string]string{"replicas": "2"}}}}
	RegisterTestingT(t)
	if h := WaitForFailoverHistory(context.Background(), in, patient...); len(h) != 1 || h[0].ClustersAfterFailover[0] != "member2" {
		t.Fatalf("history %+v", h)
	}

	in.Items[0].After = []string{"member3"}
	expectFailure(t, waitFailures(t, func() { WaitForFailoverHistory(context.Background(), in, quick...) }),
		"the failover history of ns/web-deployment", "item 0", "member3")
	in.Items, in.Count = nil, 2
	expectFailure(t, waitFailures(t, func() { WaitForFailoverHistory(context.Background(), in, quick...) }), "failover history items")
}

func TestWaitForEvictionTasksRetired(t *testing.T) {
	f := newFakeLab()
	rb := binding("web", "Deployment", "member2")
	rb.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "member1"}}
	f.addBinding(t, rb)
	in := WaitForEvictionTasksRetiredInput{Karmada: f.Karmada, Namespace: "ns", Name: "web", Kind: "Deployment", From: "member1"}
	expectFailure(t, waitFailures(t, func() { WaitForEvictionTasksRetired(context.Background(), in, quick...) }),
		"the eviction tasks of Deployment ns/web retired", "the eviction task from member1 is retired")

	in.From = "member3" // a task from another cluster does not count
	RegisterTestingT(t)
	WaitForEvictionTasksRetired(context.Background(), in, patient...)
}

func TestWaitForEvent(t *testing.T) {
	f := newFakeLab()
	ev := func(name, typ, reason, msg string) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Type: typ, Reason: reason, Message: msg,
			InvolvedObject: corev1.ObjectReference{Kind: "ResourceBinding", Name: "web-deployment"}}
	}
	for _, e := range []*corev1.Event{
		ev("a", corev1.EventTypeNormal, "Scheduled", "scheduled to member1"),
		ev("b", corev1.EventTypeWarning, "PreservedStateExtractionFailed", "rule x extracted nothing from member1"),
	} {
		if _, err := f.kube.CoreV1().Events("ns").Create(context.Background(), e, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	in := WaitForEventInput{Getter: f.Karmada, Namespace: "ns", InvolvedKind: "ResourceBinding", Type: corev1.EventTypeWarning,
		Reason: "PreservedStateExtractionFailed", MessageContains: []string{"member1", "rule x"}}
	RegisterTestingT(t)
	if got := WaitForEvent(context.Background(), in, patient...); got.Name != "b" {
		t.Fatalf("event %s, want b", got.Name)
	}

	in.MessageContains = []string{"member2"}
	expectFailure(t, waitFailures(t, func() { WaitForEvent(context.Background(), in, quick...) }),
		"a Warning PreservedStateExtractionFailed Event in karmada/ns", `naming ["member2"]`, "rule x extracted nothing from member1")
}

func TestWaitForObjectDeleted(t *testing.T) {
	f := newFakeLab("member1")
	d := &unstructured.Unstructured{}
	d.SetAPIVersion("apps/v1")
	d.SetKind("Deployment")
	d.SetNamespace("ns")
	d.SetName("web")
	deployments := f.members["member1"].dyn.Resource(DeploymentGVR).Namespace("ns")
	if _, err := deployments.Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	in := WaitForObjectDeletedInput{Getter: f.Member("member1"), GVR: DeploymentGVR, Namespace: "ns", Name: "web"}
	expectFailure(t, waitFailures(t, func() { WaitForObjectDeleted(context.Background(), in, quick...) }),
		"deployments ns/web removed from member1", "deployments web still on member1")

	later(t, func() error { return deployments.Delete(context.Background(), "web", metav1.DeleteOptions{}) })
	RegisterTestingT(t)
	WaitForObjectDeleted(context.Background(), in, patient...)
}

// flinkREST serves /jobs/<id>/checkpoints of one job with body.
func flinkREST(t *testing.T, jobID string, body *string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jobs/"+jobID+"/checkpoints" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(*body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestWaitForFlinkRestored(t *testing.T) {
	const jobID = "0123456789abcdef0123456789abcdef"
	body := `{"counts":{"completed":1},"latest":{"completed":{"id":8,"external_path":"s3://ck/job/chk-8"},"restored":{"id":7,"external_path":"s3://ck/old/chk-7"}}}`
	rest := FlinkREST{URL: flinkREST(t, jobID, &body).URL, JobID: jobID}
	in := WaitForFlinkRestoredInput{REST: rest, RestoredFrom: "s3://ck/old/chk-7/", Where: "member2"}
	expectFailure(t, waitFailures(t, func() { WaitForFlinkRestored(context.Background(), in, quick...) }),
		"job "+jobID+" on member2 restored from", "two checkpoints of the job on member2 commit its output")

	in.RestoredFrom = "s3://ck/old/chk-6"
	expectFailure(t, waitFailures(t, func() { WaitForFlinkRestored(context.Background(), in, quick...) }), "s3://ck/old/chk-7")

	in.RestoredFrom = "s3://ck/old/chk-7/"
	body = strings.Replace(body, `"completed":1`, `"completed":2`, 1)
	RegisterTestingT(t)
	if cp := WaitForFlinkRestored(context.Background(), in, patient...); cp.RestoredID != 7 || cp.Completed != 2 {
		t.Fatalf("checkpoints %+v", cp)
	}
}

func TestWaitForFlinkRunningOnItsPlacement(t *testing.T) {
	const jobID = "0123456789abcdef0123456789abcdef"
	body := `{"counts":{"completed":3},"latest":{"completed":{"id":3,"external_path":"s3://ck/job/chk-3"},"restored":null}}`
	srv := flinkREST(t, jobID, &body)
	f := newFakeLab("member1", "member2")
	f.addBinding(t, binding("sequence", flink.Kind, "member2"))
	fd := NewFlinkDeployment("ns", "sequence", "s3://ck")
	_ = unstructured.SetNestedField(fd.Object, jobID, flink.JobIDPath...)
	_ = unstructured.SetNestedField(fd.Object, "CREATED", flink.JobStatePath...)
	_ = unstructured.SetNestedField(fd.Object, srv.URL, "status", "clusterInfo", flinkrunner.ClusterInfoRestURL)
	fds := f.members["member2"].dyn.Resource(flink.GVR).Namespace("ns")
	if _, err := fds.Create(context.Background(), fd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	in := WaitForFlinkRunningInput{Lab: f.Lab, Namespace: "ns", Name: "sequence", Checkpoints: 3}
	expectFailure(t, waitFailures(t, func() { WaitForFlinkRunning(context.Background(), in, quick...) }),
		`FlinkDeployment ns/sequence RUNNING on ""`, "<string>: CREATED")

	later(t, func() error {
		_ = unstructured.SetNestedField(fd.Object, flinkrunner.JobRunning, flink.JobStatePath...)
		_, err := fds.Update(context.Background(), fd, metav1.UpdateOptions{})
		return err
	})
	RegisterTestingT(t)
	r := WaitForFlinkRunning(context.Background(), in, patient...)
	if r.Member != "member2" || r.Status.JobID != jobID || r.Checkpoints.Completed != 3 {
		t.Fatalf("running %+v", r)
	}

	in.Checkpoints = 4
	expectFailure(t, waitFailures(t, func() { WaitForFlinkRunning(context.Background(), in, quick...) }),
		"checkpoints of the job on member2 commit its output")
}
