package kind

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A karmadactl init that failed part way must not be taken for an install: each
// of its workloads is checked, not one Deployment.
func TestMissingKarmadaWorkloads(t *testing.T) {
	type item struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Replicas int32 `json:"replicas"`
		} `json:"spec"`
		Status struct {
			AvailableReplicas int32 `json:"availableReplicas,omitempty"`
			ReadyReplicas     int32 `json:"readyReplicas,omitempty"`
		} `json:"status"`
	}
	all := func() []item {
		var items []item
		for kind, names := range KarmadaInitWorkloads {
			for _, n := range names {
				var it item
				it.Kind, it.Metadata.Name, it.Spec.Replicas = kind, n, 1
				it.Status.AvailableReplicas, it.Status.ReadyReplicas = 1, 1
				items = append(items, it)
			}
		}
		return items
	}
	list := func(items []item) []byte {
		b, err := json.Marshal(map[string]any{"items": items})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if got := MissingKarmadaWorkloads(list(all())); len(got) != 0 {
		t.Errorf("complete install: missing %q", got)
	}
	// init stopped after the controller-manager: no webhook, etcd not ready.
	partial := []item{}
	for _, it := range all() {
		switch {
		case it.Metadata.Name == "karmada-webhook":
			continue
		case it.Kind == "StatefulSet":
			it.Status.ReadyReplicas = 0
		}
		partial = append(partial, it)
	}
	want := []string{"Deployment karmada-webhook", "StatefulSet etcd: 0/1 available"}
	if got := MissingKarmadaWorkloads(list(partial)); !reflect.DeepEqual(got, want) {
		t.Errorf("partial install: missing %q, want %q", got, want)
	}
	if got := MissingKarmadaWorkloads([]byte("not json")); len(got) != 1 {
		t.Errorf("unreadable list: %q", got)
	}
}
