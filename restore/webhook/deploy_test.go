package webhook

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// jsonFields returns the JSON field names of a struct type.
func jsonFields(v any) []string {
	var out []string
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}

// TestKyvernoPolicyFollowsTheWebhook ties deploy/kyverno-clusterpolicy.yaml
// to POST /locate: it sends a LocateReview, has no apiCall default (an error
// denies), fails closed, and applies only non-empty LocateDecision fields.
// (lab/kind validates the same file against Kyverno's CRD schema.)
func TestKyvernoPolicyFollowsTheWebhook(t *testing.T) {
	b, err := os.ReadFile("../deploy/kyverno-clusterpolicy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var policy struct {
		Spec struct {
			WebhookConfiguration struct {
				FailurePolicy string `json:"failurePolicy"`
			} `json:"webhookConfiguration"`
			Rules []struct {
				Context []struct {
					Name    string         `json:"name"`
					APICall map[string]any `json:"apiCall"`
				} `json:"context"`
				Mutate struct {
					Foreach []struct {
						List          string         `json:"list"`
						Preconditions map[string]any `json:"preconditions"`
					} `json:"foreach"`
				} `json:"mutate"`
			} `json:"rules"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &policy); err != nil {
		t.Fatal(err)
	}
	if policy.Spec.WebhookConfiguration.FailurePolicy != "Fail" {
		t.Errorf("failurePolicy %q, want Fail", policy.Spec.WebhookConfiguration.FailurePolicy)
	}
	if len(policy.Spec.Rules) != 1 || len(policy.Spec.Rules[0].Context) != 1 {
		t.Fatalf("want one rule with one context entry: %+v", policy.Spec.Rules)
	}
	rule := policy.Spec.Rules[0]
	call := rule.Context[0].APICall
	if _, ok := call["default"]; ok {
		t.Error("apiCall has a default: a failed /locate would not deny")
	}
	if call["method"] != "POST" || !strings.HasSuffix(call["service"].(map[string]any)["url"].(string), "/locate") {
		t.Errorf("apiCall %v, want POST …/locate", call)
	}
	var keys []string
	for _, d := range call["data"].([]any) {
		keys = append(keys, d.(map[string]any)["key"].(string))
	}
	if want := jsonFields(LocateReview{}); !sameSet(keys, want) {
		t.Errorf("apiCall data keys %q, want the LocateReview fields %q", keys, want)
	}
	decision := jsonFields(LocateDecision{})
	var applied []string
	for _, fe := range rule.Mutate.Foreach {
		field, ok := strings.CutPrefix(strings.Trim(fe.List, "[]"), rule.Context[0].Name+".")
		if !ok || !slices.Contains(decision, field) {
			t.Errorf("foreach list %q is not a LocateDecision field of %s", fe.List, rule.Context[0].Name)
		}
		if len(fe.Preconditions) == 0 {
			t.Errorf("foreach %q applies without a precondition", fe.List)
		}
		applied = append(applied, field)
	}
	// The annotations are applied twice: the decision's, and Kyverno's mark.
	slices.Sort(applied)
	applied = slices.Compact(applied)
	if !strings.Contains(string(b), "restore.lab.karmada.io/mutated-by: kyverno/flink-restore-from-latest-checkpoint") {
		t.Error("the policy does not mark what it changes with restore.lab.karmada.io/mutated-by")
	}
	if want := []string{"savepointPath", "upgradeMode", "annotations"}; !sameSet(applied, want) {
		t.Errorf("the policy applies %q, want %q", applied, want)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
