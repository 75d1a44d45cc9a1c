package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFlinkRTO(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	lines := []string{
		`{"fault":"stop-cluster","detectionSeconds":12,"scheduledSeconds":10,"appliedSeconds":0,"runningSeconds":4,"firstRecordSeconds":1,"rtoSeconds":27,"restoredCheckpoint":5,"latestCompletedCheckpoint":5,"reprocessed":40}`,
		`{"fault":"stop-cluster","detectionSeconds":14,"scheduledSeconds":10,"appliedSeconds":2,"runningSeconds":6,"firstRecordSeconds":-1,"rtoSeconds":33,"restoredCheckpoint":7,"latestCompletedCheckpoint":7,"reprocessed":60}`,
		`{"fault":"flink-starved","detectionSeconds":31,"scheduledSeconds":2,"appliedSeconds":0,"runningSeconds":5,"firstRecordSeconds":0.5,"rtoSeconds":39,"restoredCheckpoint":4,"latestCompletedCheckpoint":4}`,
	}
	if err := os.WriteFile(good, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := flinkRTO(&out, []string{good}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### stop-cluster: 2 runs", "### flink-starved: 1 runs", "| p50 | 12.0 s | 10.0 s | 0.0 s | 4.0 s | 1.0 s | **27.0 s** |",
		"| p90 | 14.0 s | 10.0 s | 2.0 s | 6.0 s | 1.0 s | **33.0 s** |", "| 2 | 14.0 s | 10.0 s | 2.0 s | 6.0 s | – |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"fault":"stop-cluster","rtoSeconds":30,"restoredCheckpoint":4,"latestCompletedCheckpoint":5,"duplicated":100}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := flinkRTO(&bytes.Buffer{}, []string{good, bad})
	if err == nil || !strings.Contains(err.Error(), "duplicated=100 restored chk-4, latest chk-5") {
		t.Fatalf("a run that restored an older checkpoint: got %v", err)
	}
	if err := flinkRTO(&bytes.Buffer{}, []string{filepath.Join(dir, "none.jsonl")}); err == nil {
		t.Fatal("a missing file: want an error")
	}
}
