package logtail

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileAndLines(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 50; i++ {
		b.WriteString(strings.Repeat("x", i*20))
		b.WriteString("\n")
	}
	path := filepath.Join(t.TempDir(), "p.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(File(path, 3), "\n")
	if len(got) != 3 || len(got[0]) != maxLine+3 || !strings.HasSuffix(got[2], "...") {
		t.Fatalf("File: %d lines, first %d chars", len(got), len(got[0]))
	}
	if File(filepath.Join(t.TempDir(), "none"), 3) != "" {
		t.Error("a missing file gives lines")
	}
	if got := Lines("a\nb\nc\n", 2); got != "b\nc" {
		t.Errorf("Lines = %q", got)
	}
	if got := Indent("a\nb", "  "); got != "  a\n  b" {
		t.Errorf("Indent = %q", got)
	}
}
