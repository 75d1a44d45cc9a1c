package providers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/karmada-failover/lab/lab/config"
)

// TestOpen: without LAB_PROVIDER, down/status/... act on a kind lab that is recorded as up,
// and on the hermetic lab otherwise; up and an explicit LAB_PROVIDER are never overridden.
func TestOpen(t *testing.T) {
	root := t.TempDir()
	t.Setenv("LAB_PROVIDER", "")
	os.Unsetenv("LAB_PROVIDER")
	t.Setenv("LAB_DIR", "")
	os.Unsetenv("LAB_DIR")
	pick := func(up bool) (config.Provider, bool) {
		t.Helper()
		p, recorded, err := Open(root, up)
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv("LAB_PROVIDER") != "" {
			t.Fatal("Open left LAB_PROVIDER set")
		}
		return p.Name(), recorded
	}
	if got, _ := pick(false); got != config.ProviderLocal {
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
	if got, recorded := pick(false); got != config.ProviderKind || !recorded {
		t.Errorf("a kind lab up: got %s (recorded %t), want kind", got, recorded)
	}
	if got, _ := pick(true); got != config.ProviderLocal {
		t.Errorf("up follows LAB_PROVIDER only: got %s", got)
	}
	write(`{"provider":"kind","ready":false}`)
	if got, _ := pick(false); got != config.ProviderLocal {
		t.Errorf("a kind lab that is down: got %s, want local", got)
	}
	write(`{"provider":"kind","ready":true}`)
	t.Setenv("LAB_PROVIDER", "local")
	if p, recorded, err := Open(root, false); err != nil || p.Name() != config.ProviderLocal || recorded {
		t.Errorf("explicit LAB_PROVIDER=local: got %v (recorded %t)", err, recorded)
	}
	write(`{not json`)
	os.Unsetenv("LAB_PROVIDER")
	if _, _, err := Open(root, false); err == nil {
		t.Error("a corrupt kind record is reported, not ignored")
	}
}
