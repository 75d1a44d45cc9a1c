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

// TestCheckpointStoreRestartKeepsCredentials: the lab's S3 credentials are made once per lab
// (Up's setup); preparing another start of SeaweedFS (a fault healed) keeps them and its data,
// so the runners, their Flink jobs and the restore webhooks, which were given the credentials
// when they started, are not refused by the store that comes back. Before, every start wrote
// a new secret and the store answered 403 to every client for the rest of the lab's life.
func TestCheckpointStoreRestartKeepsCredentials(t *testing.T) {
	l := testLab(t)
	c, err := l.component("seaweedfs", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.prepare(); err == nil || !strings.Contains(err.Error(), "lab up") {
		t.Fatalf("a start before the lab's setup: got %v, want an error naming `lab up`", err)
	}
	if err := l.setUpComponent("seaweedfs"); err != nil {
		t.Fatal(err)
	}
	creds, err := l.S3Credentials()
	if err != nil {
		t.Fatal(err)
	}
	identities, err := os.ReadFile(l.s3Identities())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(identities), creds.SecretKey) {
		t.Fatalf("SeaweedFS's identities do not hold the lab's secret")
	}
	kept := filepath.Join(l.s3Data(), "volume-1.dat")
	if err := os.MkdirAll(l.s3Data(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kept, []byte("checkpoint"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // three restarts of the store
		if err := c.prepare(); err != nil {
			t.Fatalf("restart %d: %v", i+1, err)
		}
	}
	again, err := l.S3Credentials()
	if err != nil {
		t.Fatal(err)
	}
	if *again != *creds {
		t.Errorf("a restart changed the lab's S3 credentials")
	}
	if b, err := os.ReadFile(l.s3Identities()); err != nil || string(b) != string(identities) {
		t.Errorf("a restart changed SeaweedFS's identities (%v)", err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("a restart lost the store's data: %v", err)
	}
	// Another lab (Up) gets a secret of its own.
	if err := l.setUpComponent("seaweedfs"); err != nil {
		t.Fatal(err)
	}
	if other, _ := l.S3Credentials(); other.SecretKey == creds.SecretKey {
		t.Errorf("a new lab reused the previous lab's secret")
	}
}
