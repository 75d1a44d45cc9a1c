package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryWaitIsAFrameworkWait is a static check of the e2e specs (it needs no lab): they
// wait only through e2e/framework's WaitForX(ctx, input, intervals...), never with an
// Eventually of their own, and every interval a spec asks for (Config.GetIntervals(spec, key))
// has a default in config/e2e.yaml, so that no wait panics for want of one in the middle of a
// run.
func TestEveryWaitIsAFrameworkWait(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile(filepath.Join("config", "e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile(`GetIntervals\([^,]+, "([a-z-]+)"\)`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") && f != "e2e_suite_test.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "Eventually("); n > 0 {
			t.Errorf("%s waits with Eventually %d times: wait with a framework.WaitForX instead", f, n)
		}
		for _, m := range key.FindAllStringSubmatch(string(b), -1) {
			if !strings.Contains(string(config), "\n  default/"+m[1]+":") {
				t.Errorf("%s waits with interval %q, which config/e2e.yaml has no default/%s for", f, m[1], m[1])
			}
		}
	}
}
