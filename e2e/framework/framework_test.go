package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSuiteConfigLoadsAndFallsBackToDefaults(t *testing.T) {
	c, err := LoadConfig(filepath.Join("..", "config", "e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Timeout("no-such-spec", "wait-failover"); got != 3*time.Minute {
		t.Fatalf("default/wait-failover timeout = %s", got)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("intervals:\n  default/x: [\"soon\", \"1s\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(bad); err == nil || !strings.Contains(err.Error(), "default/x") {
		t.Fatalf("a bad duration is not reported: %v", err)
	}
}

func TestTimelineOrdersMarksAndWritesAReport(t *testing.T) {
	tl := NewTimeline("Failover by taint")
	t0 := time.Now()
	tl.MarkAt("scheduled to member2", t0.Add(3*time.Second))
	tl.MarkAt("failure injected on member1", t0)
	tl.MarkAt("failure injected on member1", t0.Add(time.Hour)) // the first mark of a label wins
	marks := tl.Marks()
	if len(marks) != 2 || marks[0].Label != "failure injected on member1" {
		t.Fatalf("marks %v", marks)
	}
	if s := tl.Since("failure injected on member1", "scheduled to member2"); s != 3 {
		t.Fatalf("Since = %v", s)
	}
	if s := tl.Since("failure injected on member1", "never"); s != -1 {
		t.Fatalf("Since of a missing mark = %v", s)
	}
	dir := t.TempDir()
	if err := tl.Write(dir, "taint.svg"); err != nil {
		t.Fatal(err)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "taint.svg"))
	report, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(svg), "scheduled to member2 (3.0s)") || !strings.Contains(string(report), "(taint.svg)") {
		t.Fatalf("svg or report lacks the marks:\n%s\n%s", svg, report)
	}
}
