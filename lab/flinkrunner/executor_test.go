package flinkrunner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A killed JVM leaves what it unpacked in java.io.tmpdir: each job of the local
// executor gets a directory of its own, emptied before its next start.
func TestLocalExecutorGivesEachJobAnEmptiedTemporaryDirectory(t *testing.T) {
	dir := t.TempDir()
	// A stand-in for java: prints its arguments and the files of its temp dir, then leaves one there.
	java := filepath.Join(dir, "java")
	script := `#!/bin/sh
tmp=""
for a in "$@"; do case "$a" in -Djava.io.tmpdir=*) tmp="${a#-Djava.io.tmpdir=}";; esac; done
echo "args: $*"
echo "found: $(ls "$tmp" | tr '\n' ' ')"
touch "$tmp/flink-rpc-akka-left-behind.jar"
`
	if err := os.WriteFile(java, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e, err := NewLocalExecutor(24700, 24701, filepath.Join(dir, "logs"), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &Deployment{Namespace: "default", Name: "job"}
	run := func() string {
		p, err := e.Start(context.Background(), d, &Launch{Argv: []string{java, "-cp", "job.jar", "Main"}}, 24700)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.Done():
		case <-time.After(10 * time.Second):
			p.Stop(time.Second)
			t.Fatal("the stand-in java did not exit")
		}
		return p.LogTail(10)
	}
	tmp := filepath.Join(dir, "logs", "tmp", "default_job")
	first := run()
	if !strings.Contains(first, "args: -Djava.io.tmpdir="+tmp+" -cp job.jar Main") {
		t.Fatalf("the JVM did not get its own java.io.tmpdir before its other flags:\n%s", first)
	}
	if _, err := os.Stat(filepath.Join(tmp, "flink-rpc-akka-left-behind.jar")); err != nil {
		t.Fatalf("the process did not write into its temp dir: %v", err)
	}
	second := run()
	if strings.Contains(second, "found: flink-rpc-akka-left-behind.jar") {
		t.Fatalf("the next start found what the earlier process left:\n%s", second)
	}
}
