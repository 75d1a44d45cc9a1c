package kind

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// TestRolloutStatus: a Deployment counts as rolled out as kubectl rollout status
// counts it, and a wait that gives up says what it is still waiting for.
func TestRolloutStatus(t *testing.T) {
	deploy := func(gen, observed int64, replicas, updated, total, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d", Generation: gen},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
			Status: appsv1.DeploymentStatus{ObservedGeneration: observed, UpdatedReplicas: updated, Replicas: total,
				AvailableReplicas: available, Conditions: conds},
		}
	}
	for name, tc := range map[string]struct {
		d    *appsv1.Deployment
		want string // "" = rolled out
	}{
		"rolled out":         {d: deploy(2, 2, 1, 1, 1, 1)},
		"generation unseen":  {d: deploy(3, 2, 1, 1, 1, 1), want: "not observed yet"},
		"not updated":        {d: deploy(2, 2, 2, 1, 2, 2), want: "1 of 2 replicas updated"},
		"old replica left":   {d: deploy(2, 2, 1, 1, 2, 1), want: "1 old replicas pending termination"},
		"updated not ready":  {d: deploy(2, 2, 1, 1, 1, 0), want: "0 of 1 updated replicas available"},
		"past its deadline":  {d: deploy(2, 2, 1, 0, 1, 0, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Reason: "ProgressDeadlineExceeded", Message: "stuck"}), want: "exceeded its progress deadline: stuck"},
		"no such deployment": {d: &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other"}}, want: "not found"},
	} {
		t.Run(name, func(t *testing.T) {
			k := &kube{cs: fake.NewSimpleClientset(tc.d), where: "test"}
			err := k.rolloutStatus(context.Background(), "ns", "d", time.Millisecond)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestWaitConditionAndDelete: a condition is waited for as kubectl wait does, and
// deleting what is not there, or a kind the cluster does not serve, is no error.
func TestWaitConditionAndDelete(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "kyverno.io", Version: "v1", Kind: "ClusterPolicy"}
	gvr := schema.GroupVersionResource{Group: "kyverno.io", Version: "v1", Resource: "clusterpolicies"}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(gvk, meta.RESTScopeRoot)
	policy := func(name, status string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetName(name)
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": status, "message": "m"}}, "status", "conditions")
		return u
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ClusterPolicyList"},
		policy("ready", "True"), policy("pending", "False"))
	k := &kube{dyn: dyn, mapper: mapper, where: "test"}
	ctx := context.Background()
	if err := k.waitCondition(ctx, "kyverno.io/v1", "ClusterPolicy", "", "ready", "Ready", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := k.waitCondition(ctx, "kyverno.io/v1", "ClusterPolicy", "", "pending", "Ready", time.Millisecond); err == nil || !strings.Contains(err.Error(), "Ready is False") {
		t.Fatalf("pending policy: %v", err)
	}
	if err := k.waitCondition(ctx, "kyverno.io/v1", "ClusterPolicy", "", "gone", "Ready", time.Millisecond); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("absent policy: %v", err)
	}
	if err := k.delete(ctx, "kyverno.io/v1", "ClusterPolicy", "", "ready", time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := k.get(ctx, "kyverno.io/v1", "ClusterPolicy", "", "ready"); err == nil {
		t.Fatal("the deleted policy is still there")
	}
	if err := k.delete(ctx, "kyverno.io/v1", "ClusterPolicy", "", "ready", time.Second); err != nil {
		t.Fatalf("deleting what is gone: %v", err)
	}
	if err := k.delete(ctx, "cert-manager.io/v1", "Certificate", "ns", "c", 0); err != nil {
		t.Fatalf("a kind the cluster does not serve: %v", err)
	}
}
