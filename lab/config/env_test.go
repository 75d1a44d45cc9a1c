package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryLABVariableIsLoadedAndDocumented: the lab's settings are read in one place, this
// package (Load), and each is documented in docs/LAB.md (README's reference of the lab's
// settings) or docs/KIND.md (the kind lab's), so the record of a running lab and
// the documentation never miss one. LAB_ROOT, which finds the repository before Load can
// run, is the one exception.
func TestEveryLABVariableIsLoadedAndDocumented(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var readme []byte
	for _, doc := range []string{"LAB.md", "KIND.md"} {
		b, err := os.ReadFile(filepath.Join(root, "docs", doc))
		if err != nil {
			t.Fatal(err)
		}
		readme = append(readme, b...)
	}
	literal := regexp.MustCompile(`"(LAB_[A-Z_]+)"`)
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && (rel == "_output" || rel == ".git" || strings.HasPrefix(d.Name(), ".")) && rel != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range literal.FindAllStringSubmatch(string(b), -1) {
			name := m[1]
			seen[name] = true
			inConfig := filepath.Dir(rel) == filepath.Join("lab", "config")
			if !inConfig && !(name == "LAB_ROOT" && filepath.Dir(rel) == filepath.Join("lab", "cmd", "lab", "app", "options")) {
				t.Errorf("%s reads %s: read it in lab/config (Load) and pass it on", rel, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 10 {
		t.Fatalf("found only %d LAB_ variables: is the walk right?", len(seen))
	}
	for name := range seen {
		doc := name
		if strings.HasPrefix(name, "LAB_BIN_") {
			doc = "LAB_BIN_<NAME>"
		}
		if !strings.Contains(string(readme), "`"+doc) {
			t.Errorf("%s is not documented in docs/LAB.md or docs/KIND.md", doc)
		}
	}
}
