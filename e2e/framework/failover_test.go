package framework

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
	karmadafake "github.com/karmada-io/karmada/pkg/generated/clientset/versioned/fake"

	failoverfake "github.com/karmada-failover/lab/apis/generated/clientset/versioned/fake"
	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
)

func fakeFailoverLab(rb *workv1alpha2.ResourceBinding) (*Lab, *failoverfake.Clientset) {
	fc := failoverfake.NewSimpleClientset(rb)
	kc := karmadafake.NewSimpleClientset(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"},
		Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}}}})
	return &Lab{Karmada: &ClusterProxy{Name: "karmada", karmada: kc, failover: fc}}, fc
}

// TestWaitForFailoverFollowsTheBinding moves a binding from member1 to member2 while
// WaitForFailover waits, and checks it returns member2 once the workload arrived there, with
// the moments on the timeline.
func TestWaitForFailoverFollowsTheBinding(t *testing.T) {
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: BindingName("web", "Deployment")},
		Spec: workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}}}}
	l, fc := fakeFailoverLab(rb)
	go func() {
		time.Sleep(100 * time.Millisecond)
		moved := rb.DeepCopy()
		moved.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member2"}}
		moved.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "member1"}}
		gvr := workv1alpha2.SchemeGroupVersion.WithResource("resourcebindings")
		if err := fc.Tracker().Update(gvr, moved, "ns"); err != nil {
			panic(err)
		}
	}()
	tl := NewTimeline("test")
	checks := 0
	RegisterTestingT(t)
	res := WaitForFailover(context.Background(), WaitForFailoverInput{
		Lab: l, Namespace: "ns", Name: "web", Kind: "Deployment", Source: "member1", Timeline: tl,
		Arrived: func(_ context.Context, dest string) error {
			if checks++; checks < 3 {
				return errors.New("not Available yet")
			}
			return nil
		},
	}, 5*time.Second, 20*time.Millisecond)
	if res.Destination != "member2" || res.Binding == nil || checks != 3 {
		t.Fatalf("result %+v, checks %d", res, checks)
	}
	var labels []string
	for _, m := range tl.Marks() {
		labels = append(labels, m.Label)
	}
	if got := strings.Join(labels, "; "); got != "eviction task for member1; scheduled to member2" {
		t.Errorf("timeline %q", got)
	}
}

func TestWaitForFailoverSaysWhatItWaitedFor(t *testing.T) {
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: BindingName("web", "Deployment")},
		Spec: workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}}}}
	l, _ := fakeFailoverLab(rb)
	failures := waitFailures(t, func() {
		WaitForFailover(context.Background(), WaitForFailoverInput{
			Lab: l, Namespace: "ns", Name: "web", Kind: "Deployment", Source: "member1",
			Arrived: func(context.Context, string) error { return nil },
		}, 200*time.Millisecond, 20*time.Millisecond)
	})
	expectFailure(t, failures, "Deployment ns/web failed over from member1", "scheduled to [member1], not to one cluster other than member1")
}
