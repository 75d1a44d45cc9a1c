package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/karmada-failover/lab/lab/config"
)

// TestRecordedLab: without LAB_PROVIDER, down/status/... act on a kind lab
// that is recorded as up, and on the hermetic lab otherwise; up and an
// explicit LAB_PROVIDER are never overridden.
func TestRecordedLab(t *testing.T) {
	root := t.TempDir()
	t.Setenv("LAB_PROVIDER", "")
	os.Unsetenv("LAB_PROVIDER")
	t.Setenv("LAB_DIR", "")
	os.Unsetenv("LAB_DIR")
	load := func() *config.Config {
		cfg, err := config.Load(root)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	pick := func(command string) config.Provider {
		t.Helper()
		cfg, err := recordedLab(root, load(), command)
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv("LAB_PROVIDER") != "" {
			t.Fatal("recordedLab left LAB_PROVIDER set")
		}
		return cfg.Provider
	}
	if got := pick("down"); got != config.ProviderLocal {
		t.Fatalf("no lab recorded: got %s", got)
	}
	state := filepath.Join(root, "_output", "lab-kind", "lab.json")
	if err := os.MkdirAll(filepath.Dir(state), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(state, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"provider":"kind","ready":true}`)
	for _, cmd := range []string{"down", "status", "env", "clean"} {
		if got := pick(cmd); got != config.ProviderKind {
			t.Errorf("%s with a kind lab up: got %s, want kind", cmd, got)
		}
	}
	if got := pick("up"); got != config.ProviderLocal {
		t.Errorf("up follows LAB_PROVIDER only: got %s", got)
	}
	write(`{"provider":"kind","ready":false}`)
	if got := pick("down"); got != config.ProviderLocal {
		t.Errorf("a kind lab that is down: got %s, want local", got)
	}
	write(`{"provider":"kind","ready":true}`)
	t.Setenv("LAB_PROVIDER", "local")
	cfg, err := recordedLab(root, load(), "down")
	if err != nil || cfg.Provider != config.ProviderLocal {
		t.Errorf("explicit LAB_PROVIDER=local: got %v, %v", cfg.Provider, err)
	}
}
