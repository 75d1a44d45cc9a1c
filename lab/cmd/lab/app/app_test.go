package app

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCommandReference: docs/commands/ is what the commands generate; after a
// change to a command, `go run ./lab/cmd/lab gen-docs docs/commands` renews it.
func TestCommandReference(t *testing.T) {
	committed := filepath.Join("..", "..", "..", "..", "docs", "commands")
	got := t.TempDir()
	if err := GenDocs(got); err != nil {
		t.Fatal(err)
	}
	names := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, e := range entries {
			n = append(n, e.Name())
		}
		return n
	}
	if g, c := names(got), names(committed); !slices.Equal(g, c) {
		t.Fatalf("docs/commands holds %v, the commands generate %v: run go run ./lab/cmd/lab gen-docs docs/commands", c, g)
	}
	for _, n := range names(got) {
		g, _ := os.ReadFile(filepath.Join(got, n))
		c, _ := os.ReadFile(filepath.Join(committed, n))
		if !bytes.Equal(g, c) {
			t.Errorf("docs/commands/%s is not what the command generates: run go run ./lab/cmd/lab gen-docs docs/commands", n)
		}
	}
}

// TestArguments: what a user types is parsed as before, flags before or after the
// arguments, and a wrong invocation fails with a clear error before any lab is touched.
func TestArguments(t *testing.T) {
	parse := func(args ...string) (string, []string, map[string]string, error) {
		t.Helper()
		c, rest, err := NewCommand().Find(args)
		if err != nil {
			return "", nil, nil, err
		}
		if err := c.ParseFlags(rest); err != nil {
			return c.CommandPath(), nil, nil, err
		}
		flags := map[string]string{}
		for _, f := range []string{"remove", "graceful", "period", "for", "catch-up", "cluster", "namespace", "selector", "heal", "json"} {
			if fl := c.Flags().Lookup(f); fl != nil && fl.Changed {
				flags[f] = fl.Value.String()
			}
		}
		pos := c.Flags().Args()
		if c.Args != nil {
			if err := c.Args(c, pos); err != nil {
				return c.CommandPath(), pos, flags, err
			}
		}
		return c.CommandPath(), pos, flags, nil
	}
	for _, tc := range []struct {
		args    []string
		path    string
		pos     []string
		flags   map[string]string
		wantErr string
	}{
		{args: []string{"taint", "member1", "k=v:NoExecute", "--remove"}, path: "lab taint", pos: []string{"member1", "k=v:NoExecute"}, flags: map[string]string{"remove": "true"}},
		{args: []string{"member", "stop", "--graceful", "member2"}, path: "lab member stop", pos: []string{"member2"}, flags: map[string]string{"graceful": "true"}},
		{args: []string{"member", "flap", "member1", "--period", "2s", "--for", "30s"}, path: "lab member flap", pos: []string{"member1"}, flags: map[string]string{"period": "2s", "for": "30s"}},
		{args: []string{"cluster", "out-of-service", "member1", "--remove"}, path: "lab cluster out-of-service", pos: []string{"member1"}, flags: map[string]string{"remove": "true"}},
		{args: []string{"flink", "replication-lag", "--catch-up", "s3://b/.lab-replication-lag/x"}, path: "lab flink replication-lag", flags: map[string]string{"catch-up": "s3://b/.lab-replication-lag/x"}},
		{args: []string{"flink", "replication-lag", "s3://b/d/j"}, path: "lab flink replication-lag", pos: []string{"s3://b/d/j"}},
		{args: []string{"restore", "kyverno"}, path: "lab restore", pos: []string{"kyverno"}},
		{args: []string{"member", "stop"}, path: "lab member stop", wantErr: "accepts 1 arg(s), received 0"},
		{args: []string{"member", "stop", "member1", "member2"}, path: "lab member stop", wantErr: "accepts 1 arg(s), received 2"},
		{args: []string{"member", "stop", "member1", "--grace"}, path: "lab member stop", wantErr: "unknown flag: --grace"},
		{args: []string{"taint", "member1"}, path: "lab taint", wantErr: "accepts 2 arg(s), received 1"},
		{args: []string{"flink", "replication-lag"}, path: "lab flink replication-lag", wantErr: "want either s3://BUCKET/DIR/JOB_ID or --catch-up PARKED"},
		{args: []string{"flink", "replication-lag", "s3://b/d/j", "--catch-up", "s3://p"}, path: "lab flink replication-lag", wantErr: "want either"},
		{args: []string{"restore", "operator"}, path: "lab restore", wantErr: `invalid argument "operator"`},
		{args: []string{"up", "now"}, path: "lab up", wantErr: `unknown command "now"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			path, pos, flags, err := parse(tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if path != tc.path || !slices.Equal(pos, tc.pos) || len(flags) != len(tc.flags) {
				t.Fatalf("got %s %v %v, want %s %v %v", path, pos, flags, tc.path, tc.pos, tc.flags)
			}
			for k, v := range tc.flags {
				if flags[k] != v {
					t.Fatalf("--%s=%s, want %s", k, flags[k], v)
				}
			}
		})
	}
}
