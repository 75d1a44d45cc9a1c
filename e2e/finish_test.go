package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEverySpecFinishes is a static check of the e2e specs (it needs no lab):
// every spec container that makes a spec environment (newSpecEnv) finishes it
// in an AfterEach, which undoes the spec's faults (a starved runner, a taint,
// a stopped member), deletes its namespace and waits for every member to be
// Ready again. A container without it leaves its faults to the specs after it.
func TestEverySpecFinishes(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	const finish = "AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))"
	for _, f := range files {
		if f == "helpers.go" || strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		envs, finishes := strings.Count(string(b), "newSpecEnv("), strings.Count(string(b), finish)
		if finishes < envs {
			t.Errorf("%s makes %d spec environments (newSpecEnv) but finishes %d: add %s to each container", f, envs, finishes, finish)
		}
	}
}
