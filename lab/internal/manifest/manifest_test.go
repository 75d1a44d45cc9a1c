package manifest

import (
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	src := []byte("image: {{Image}}\nurl: https://{{name}}.{{namespace}}.svc:443/convert\ncheck: \"{{ request.object.metadata.name }}\"\n")
	out, err := Render("x.yaml", src, append(Values(map[string]any{"Image": "lab/job:1"}),
		"https://{{name}}.{{namespace}}.svc:443/convert", "https://127.0.0.1:24445/convert")...)
	if err != nil {
		t.Fatal(err)
	}
	want := "image: lab/job:1\nurl: https://127.0.0.1:24445/convert\ncheck: \"{{ request.object.metadata.name }}\"\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	if _, err := Render("x.yaml", src, Values(map[string]any{"Image": "a"})...); err == nil || !strings.Contains(err.Error(), "{{name}} left") {
		t.Errorf("a placeholder left: %v", err)
	}
	if _, err := Render("x.yaml", src, "{{caBundle}}", "Zm9v"); err == nil || !strings.Contains(err.Error(), "has no {{caBundle}}") {
		t.Errorf("a placeholder the file lacks: %v", err)
	}
	if _, err := Render("x.yaml", src, "odd"); err == nil {
		t.Error("odd pairs accepted")
	}
}
