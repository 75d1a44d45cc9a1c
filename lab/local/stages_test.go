package local

import (
	"strings"
	"testing"

	"github.com/karmada-failover/lab/lab/config"
)

func TestRenderStage(t *testing.T) {
	rule := config.ImagePullRule{Unpullable: []string{"fake/"}}
	out, err := renderStage([]byte("key: '[[unpullable:jq]]'\ntpl: '{{ if [[unpullable:$c.image]] }}x{{ end }}'\n"), rule)
	if err != nil {
		t.Fatal(err)
	}
	want := "key: '" + rule.PodJQ() + "'\ntpl: '{{ if " + rule.TemplateCond("$c.image") + " }}x{{ end }}'\n"
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	for _, bad := range []string{"[[unpullable:json]]", "[[unpullable:$c.image) or (x]]", "[[unpullable:jq"} {
		if _, err := renderStage([]byte(bad), rule); err == nil || !strings.Contains(err.Error(), "placeholder") {
			t.Errorf("%q: want a placeholder error, got %v", bad, err)
		}
	}
	// A file without placeholders (kwok's defaults, the chaos label) is unchanged.
	plain := "statusTemplate: |\n  {{ $now := Now }}\n  phase: Running\n"
	if out, err := renderStage([]byte(plain), rule); err != nil || string(out) != plain {
		t.Fatalf("plain stage changed: %q, %v", out, err)
	}
}
