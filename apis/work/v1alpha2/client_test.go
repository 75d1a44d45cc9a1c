/*
Copyright The Karmada Failover Lab Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha2_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/karmada-failover/lab/apis/generated/clientset/versioned/fake"
	typedv1alpha2 "github.com/karmada-failover/lab/apis/generated/clientset/versioned/typed/work/v1alpha2"
	"github.com/karmada-failover/lab/apis/generated/informers/externalversions"
	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
)

// bindingJSON is a ResourceBinding as the Karmada API server of the patched tree
// serves it: it has fields this package does not declare (spec.placement,
// spec.replicas, status.aggregatedStatus[].appliedMessage, ...), which decoding
// must ignore.
const bindingJSON = `{
  "apiVersion": "work.karmada.io/v1alpha2",
  "kind": "ResourceBinding",
  "metadata": {"name": "nginx-deployment", "namespace": "default", "generation": 3},
  "spec": {
    "resource": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx", "uid": "0a1b2c", "resourceVersion": "42"},
    "replicas": 2,
    "placement": {"clusterAffinity": {"clusterNames": ["member1", "member2", "member3"]}},
    "clusters": [{"name": "member2", "replicas": 2}],
    "gracefulEvictionTasks": [{
      "fromCluster": "member1",
      "purgeMode": "Gracefully",
      "reason": "ApplicationFailure",
      "producer": "resource-binding-application-failover-controller",
      "preservedLabelState": {"failover.example.io/replicas": "2"},
      "clustersBeforeFailover": ["member1"],
      "creationTimestamp": "2025-12-02T10:00:00Z",
      "gracePeriodSeconds": 600
    }]
  },
  "status": {
    "schedulerObservedGeneration": 3,
    "lastScheduledTime": "2025-12-02T10:00:05Z",
    "conditions": [{"type": "Scheduled", "status": "True", "reason": "Success", "message": "Binding has been scheduled successfully.", "lastTransitionTime": "2025-12-02T10:00:05Z"}],
    "aggregatedStatus": [{"clusterName": "member2", "applied": true, "appliedMessage": "", "health": "Healthy", "status": {"readyReplicas": 2}}],
    "failoverHistory": [
      {
        "startTime": "2025-12-01T08:00:00Z",
        "reason": "ClusterFailure",
        "fromCluster": "member3",
        "producer": "TaintManager",
        "clustersBeforeFailover": ["member3"],
        "clustersAfterFailover": ["member1"]
      },
      {
        "startTime": "2025-12-02T10:00:00Z",
        "reason": "ApplicationFailure",
        "fromCluster": "member1",
        "producer": "ApplicationFailover",
        "clustersBeforeFailover": ["member1"],
        "clustersAfterFailover": ["member2"],
        "preservedLabelState": {"failover.example.io/replicas": "2"}
      }
    ]
  }
}`

func decodeBinding(t *testing.T) *workv1alpha2.ResourceBinding {
	t.Helper()
	rb := &workv1alpha2.ResourceBinding{}
	if err := json.Unmarshal([]byte(bindingJSON), rb); err != nil {
		t.Fatalf("decoding binding: %v", err)
	}
	return rb
}

func wantHistory() []workv1alpha2.FailoverHistoryItem {
	ts := func(s string) metav1.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return metav1.NewTime(tm)
	}
	return []workv1alpha2.FailoverHistoryItem{
		{
			StartTime:              ts("2025-12-01T08:00:00Z"),
			Reason:                 workv1alpha2.FailoverReasonClusterFailure,
			FromCluster:            "member3",
			Producer:               "TaintManager",
			ClustersBeforeFailover: []string{"member3"},
			ClustersAfterFailover:  []string{"member1"},
		},
		{
			StartTime:              ts("2025-12-02T10:00:00Z"),
			Reason:                 workv1alpha2.FailoverReasonApplicationFailure,
			FromCluster:            "member1",
			Producer:               "ApplicationFailover",
			ClustersBeforeFailover: []string{"member1"},
			ClustersAfterFailover:  []string{"member2"},
			PreservedLabelState:    map[string]string{"failover.example.io/replicas": "2"},
		},
	}
}

// TestFakeClientsetReadsFailoverHistory decodes a binding from JSON, serves it
// through the generated fake clientset and reads it back with typed access.
func TestFakeClientsetReadsFailoverHistory(t *testing.T) {
	ctx := context.Background()
	client := fake.NewSimpleClientset(decodeBinding(t))

	got, err := client.WorkV1alpha2().ResourceBindings("default").Get(ctx, "nginx-deployment", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if diff := cmp.Diff(wantHistory(), got.Status.FailoverHistory); diff != "" {
		t.Errorf("status.failoverHistory (-want +got):\n%s", diff)
	}
	if got.Spec.Resource.Kind != "Deployment" || got.Spec.Resource.Name != "nginx" || got.Spec.Resource.UID != "0a1b2c" {
		t.Errorf("spec.resource = %+v", got.Spec.Resource)
	}
	if len(got.Spec.Clusters) != 1 || got.Spec.Clusters[0] != (workv1alpha2.TargetCluster{Name: "member2", Replicas: 2}) {
		t.Errorf("spec.clusters = %+v", got.Spec.Clusters)
	}
	if n := len(got.Spec.GracefulEvictionTasks); n != 1 {
		t.Fatalf("got %d graceful eviction tasks, want 1", n)
	}
	task := got.Spec.GracefulEvictionTasks[0]
	if task.FromCluster != "member1" || task.PurgeMode != "Gracefully" || task.GracePeriodSeconds == nil || *task.GracePeriodSeconds != 600 ||
		task.CreationTimestamp == nil || task.PreservedLabelState["failover.example.io/replicas"] != "2" {
		t.Errorf("spec.gracefulEvictionTasks[0] = %+v", task)
	}
	st := got.Status
	if st.SchedulerObservedGeneration != 3 || st.LastScheduledTime == nil || len(st.Conditions) != 1 || st.Conditions[0].Type != workv1alpha2.Scheduled {
		t.Errorf("status = %+v", st)
	}
	if len(st.AggregatedStatus) != 1 || st.AggregatedStatus[0].Health != workv1alpha2.ResourceHealthy ||
		!st.AggregatedStatus[0].Applied || st.AggregatedStatus[0].Status == nil {
		t.Fatalf("status.aggregatedStatus = %+v", st.AggregatedStatus)
	}
	var member struct {
		ReadyReplicas int32 `json:"readyReplicas"`
	}
	if err := json.Unmarshal(st.AggregatedStatus[0].Status.Raw, &member); err != nil || member.ReadyReplicas != 2 {
		t.Errorf("status.aggregatedStatus[0].status = %s (err %v), want readyReplicas 2", st.AggregatedStatus[0].Status.Raw, err)
	}

	list, err := client.WorkV1alpha2().ResourceBindings("").List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("List: %d items, err %v", len(list.Items), err)
	}
}

// TestFailoverHistoryJSONRoundTrip checks that status.failoverHistory survives
// decoding into these types and encoding again, byte for byte as JSON values.
func TestFailoverHistoryJSONRoundTrip(t *testing.T) {
	var in struct {
		Status struct {
			FailoverHistory json.RawMessage `json:"failoverHistory"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(bindingJSON), &in); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(decodeBinding(t).Status.FailoverHistory)
	if err != nil {
		t.Fatal(err)
	}
	var want, got interface{}
	if err := json.Unmarshal(in.Status.FailoverHistory, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("failoverHistory JSON round trip (-in +out):\n%s", diff)
	}
}

// TestClusterResourceBindingInformer reads a ClusterResourceBinding through the
// generated informer and lister.
func TestClusterResourceBindingInformer(t *testing.T) {
	rb := decodeBinding(t)
	crb := &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-clusterrole"},
		Spec:       rb.Spec,
		Status:     rb.Status,
	}
	crb.Spec.Resource = workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "nginx"}

	client := fake.NewSimpleClientset(crb)
	factory := externalversions.NewSharedInformerFactory(client, 0)
	informer := factory.Work().V1alpha2().ClusterResourceBindings()
	lister := informer.Lister()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced) {
		t.Fatal("informer did not sync")
	}
	got, err := lister.Get("nginx-clusterrole")
	if err != nil {
		t.Fatalf("lister Get: %v", err)
	}
	if diff := cmp.Diff(wantHistory(), got.Status.FailoverHistory); diff != "" {
		t.Errorf("status.failoverHistory (-want +got):\n%s", diff)
	}
	cancel()
	factory.Shutdown()
}

// TestClientsAreReadOnly guards +genclient:onlyVerbs=get,list,watch: the types
// declare a subset of upstream's fields, so a client able to write them would
// drop every other field of the bindings it writes.
func TestClientsAreReadOnly(t *testing.T) {
	allowed := map[string]bool{"Get": true, "List": true, "Watch": true}
	for _, it := range []reflect.Type{
		reflect.TypeOf((*typedv1alpha2.ResourceBindingInterface)(nil)).Elem(),
		reflect.TypeOf((*typedv1alpha2.ClusterResourceBindingInterface)(nil)).Elem(),
	} {
		for i := 0; i < it.NumMethod(); i++ {
			if m := it.Method(i).Name; !allowed[m] {
				t.Errorf("%s has method %s; the clients of this package must stay read-only", it.Name(), m)
			}
		}
	}
}

// TestWellKnownConstants pins the values shared with the patched tree.
func TestWellKnownConstants(t *testing.T) {
	for got, want := range map[string]string{
		workv1alpha2.FailoverReasonLabel:                      "failover.karmada.io/reason",
		workv1alpha2.FailoverTimeAnnotation:                   "failover.karmada.io/time",
		workv1alpha2.FailoverFromAnnotation:                   "failover.karmada.io/from",
		workv1alpha2.FailoverPreservedKeysAnnotation:          "failover.karmada.io/preserved-keys",
		workv1alpha2.FailoverStateWithheldAnnotation:          "failover.karmada.io/state-withheld",
		string(workv1alpha2.FailoverReasonApplicationFailure): "ApplicationFailure",
		string(workv1alpha2.FailoverReasonClusterFailure):     "ClusterFailure",
		workv1alpha2.SchemeGroupVersion.String():              "work.karmada.io/v1alpha2",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
