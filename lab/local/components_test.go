package local

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/karmada-failover/lab/lab/config"
)

func testLab(t *testing.T) *Lab {
	t.Helper()
	cfg, err := config.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return New(cfg)
}

// TestComponentsHaveStartTimeoutsAndDistinctAddresses: every control-plane component is
// started with a bound on its wait (a component that never answers fails `lab up` instead of
// hanging it), answers on an address of its own, and the start order is the one the control
// plane needs (the store and etcd first, the API server before the processes that use it).
func TestComponentsHaveStartTimeoutsAndDistinctAddresses(t *testing.T) {
	l := testLab(t)
	cs := l.controlPlaneComponents(nil)
	want := []string{"seaweedfs", "etcd", "karmada-apiserver", "kube-controller-manager", "karmada-aggregated-apiserver",
		"karmada-webhook", "karmada-controller-manager", "karmada-scheduler"}
	if got := l.controlPlaneNames(); !slices.Equal(got, want) {
		t.Fatalf("start order %v, want %v", got, want)
	}
	seen := map[string]string{}
	for _, c := range cs {
		if c.probe.StartTimeout <= 0 {
			t.Errorf("%s has no start timeout", c.name)
		}
		if c.probe.URL == "" || !strings.Contains(c.probe.URL, c.address) {
			t.Errorf("%s: probe %q does not answer on its address %s", c.name, c.probe.URL, c.address)
		}
		if other, ok := seen[c.address]; ok {
			t.Errorf("%s and %s share %s", c.name, other, c.address)
		}
		seen[c.address] = c.name
		if len(c.args) == 0 {
			t.Errorf("%s has no flags", c.name)
		}
		for _, a := range c.args {
			if strings.Contains(a, "0.0.0.0") {
				t.Errorf("%s binds to every interface: %s", c.name, a)
			}
		}
	}
}

// TestControllerManagerGates: the gates of a restart reach karmada-controller-manager only.
func TestControllerManagerGates(t *testing.T) {
	l := testLab(t)
	cm, err := l.component("karmada-controller-manager", map[string]bool{"FailoverHistory": false})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(cm.args, func(a string) bool {
		return strings.HasPrefix(a, "--feature-gates=") && strings.Contains(a, "FailoverHistory=false")
	}) {
		t.Errorf("controller-manager flags %v lack FailoverHistory=false", cm.args)
	}
	sch, _ := l.component("karmada-scheduler", map[string]bool{"FailoverHistory": false})
	if slices.ContainsFunc(sch.args, func(a string) bool { return strings.Contains(a, "FailoverHistory=false") }) {
		t.Errorf("scheduler flags %v got the controller's override", sch.args)
	}
	if _, err := l.component("kube-proxy", nil); err == nil {
		t.Error("an unknown component was found")
	}
}

// TestCollectLogs copies the lab's and the members' process logs, and nothing else.
func TestCollectLogs(t *testing.T) {
	l := testLab(t)
	for path, body := range map[string]string{
		filepath.Join(l.Cfg.LogDir(), "etcd.log"):                                           "etcd",
		filepath.Join(l.Cfg.LogDir(), "flink", "member1", "ns_job.log"):                     "flink",
		filepath.Join(l.Cfg.KwokDir(), "clusters", "member1", "logs", "kube-apiserver.log"): "apiserver",
		filepath.Join(l.Cfg.KwokDir(), "clusters", "member1", "kubeconfig.yaml"):            "secret",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dst := t.TempDir()
	if err := l.CollectLogs(context.Background(), dst); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dst, "lab", "etcd.log"):                                  "etcd",
		filepath.Join(dst, "lab", "flink", "member1", "ns_job.log"):            "flink",
		filepath.Join(dst, "members", "member1", "logs", "kube-apiserver.log"): "apiserver",
	} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v", path, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "members", "member1", "kubeconfig.yaml")); err == nil {
		t.Error("a kubeconfig was copied with the logs")
	}
}
