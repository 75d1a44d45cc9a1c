// Package manifest renders the manifests the labs apply: the lab's own (lab/kind/manifests),
// upstream Karmada's and restore/deploy's, by replacing literal placeholders. One mechanism
// serves files the lab does not own (upstream's {{name}}, restore/deploy's {{caBundle}} and
// URLs) and its own ({{Image}}), and leaves text that is not a placeholder alone (Kyverno's
// {{ request.object }} expressions).
package manifest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// placeholder is a placeholder left unrendered: {{word}}, without spaces or dots.
var placeholder = regexp.MustCompile(`\{\{[A-Za-z]+\}\}`)

// Render replaces each old of the pairs (old, new, old, new, ...) in src. It fails when an
// old does not occur in src (the file and the lab drifted apart) or when a placeholder is
// left, naming it.
func Render(name string, src []byte, pairs ...string) ([]byte, error) {
	if len(pairs)%2 != 0 {
		return nil, fmt.Errorf("%s: odd number of replacement strings", name)
	}
	out := src
	for i := 0; i < len(pairs); i += 2 {
		if !bytes.Contains(src, []byte(pairs[i])) {
			return nil, fmt.Errorf("%s has no %s to replace", name, pairs[i])
		}
		out = bytes.ReplaceAll(out, []byte(pairs[i]), []byte(pairs[i+1]))
	}
	if left := placeholder.Find(out); left != nil {
		return nil, fmt.Errorf("%s: placeholder %s left after rendering", name, left)
	}
	return out, nil
}

// RenderFile renders the file src into dst (created with mode).
func RenderFile(src, dst string, mode os.FileMode, pairs ...string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	out, err := Render(src, b, pairs...)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, out, mode)
}

// Values turns named values into pairs for Render: name → {{name}}.
func Values(values map[string]any) []string {
	pairs := make([]string, 0, 2*len(values))
	for k, v := range values {
		pairs = append(pairs, "{{"+k+"}}", fmt.Sprint(v))
	}
	return pairs
}

// IndentPEM indents every line of a PEM block but the first, for a placeholder that sits
// in a YAML block scalar at that indentation (restore/deploy's {{caBundle-PEM}}).
func IndentPEM(pem, indent string) string {
	return strings.ReplaceAll(strings.TrimSpace(pem), "\n", "\n"+indent)
}
