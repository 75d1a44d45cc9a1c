package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
)

// flinkLab is a lab of members members whose binaries are named (not run): the record of a
// lab with Flink.
func flinkLab(t *testing.T, members string) *Lab {
	t.Helper()
	t.Setenv("LAB_MEMBERS", members)
	l := testLab(t)
	b := &l.Cfg.Bins
	b.FlinkRunner, b.FlinkJar, b.Java, b.SeaweedFS, b.Link, b.Pod, b.Kwokctl = "flink-runner", "job.jar", "java", "weed", "lab-link", "lab-pod", "kwokctl"
	b.Etcd, b.KubeAPIServer, b.KubeControllerManager = "etcd", "kube-apiserver", "kube-controller-manager"
	if err := os.MkdirAll(filepath.Dir(l.restoreWebhookBinary()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.restoreWebhookBinary(), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if !l.FlinkEnabled() {
		t.Fatalf("Flink not enabled: %s", l.FlinkDisabledReason())
	}
	return l
}

// TestRecordListsEveryComponent: the record of the largest lab lists the control plane and,
// per member, its cluster, kwokctl's processes, its link, restore webhook, Kyverno and
// runner, each with what runs and where; its ports (which the preflight checks) are
// distinct and below the ephemeral range; every fault of lab.ComponentFaults names a
// component of it.
func TestRecordListsEveryComponent(t *testing.T) {
	l := flinkLab(t, "20")
	cs := l.components(config.RestoreKyverno)
	if want := 8 + 20*10; len(cs) != want {
		t.Fatalf("%d components, want %d", len(cs), want)
	}
	if d := lab.DuplicatePorts(cs); len(d) > 0 {
		t.Fatalf("ports declared twice: %v", d)
	}
	ports := 0
	for _, c := range cs {
		for _, p := range c.Ports {
			ports++
			if p < 1024 || p >= 32768 {
				t.Errorf("%s: port %d outside 1024..32767", c.Name, p)
			}
		}
		if c.Parent != "" || c.Kind == lab.KindCluster {
			continue
		}
		if c.Binary == "" || len(c.Args) == 0 || c.Probe == "" || len(c.Ports) == 0 {
			t.Errorf("%s: binary %q, %d args, probe %q, ports %v: want each", c.Name, c.Binary, len(c.Args), c.Probe, c.Ports)
		}
	}
	// 13 control-plane ports, 10 of SeaweedFS; per member 8 of kwokctl and its link, a
	// runner, a restore webhook and Kyverno.
	if want := 13 + 10 + 20*(8+3); ports != want {
		t.Errorf("%d ports, want %d", ports, want)
	}
	for _, f := range lab.ComponentFaults {
		member := ""
		if f.ForMember() {
			member = "member7"
		}
		name, err := f.Target(member)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lab.Find(cs, name); err != nil {
			t.Errorf("fault %s: %v", f.Fault, err)
		}
	}
	owned := lab.Owned(cs, "member3")
	var names []string
	for _, c := range owned {
		names = append(names, c.Name)
	}
	if want := []string{"member3/flink-restore-webhook", "member3/kyverno", "member3/flink-runner"}; len(names) != 3 || names[0] != want[0] || names[2] != want[2] {
		t.Errorf("member3 owns %v, want %v (stopped in reverse: the runner first)", names, want)
	}
	if webhook := l.components(config.RestoreWebhook); len(webhook) != len(cs)-20 {
		t.Errorf("without Kyverno: %d components, want %d", len(webhook), len(cs)-20)
	}
}

// TestStopComponentRefusesWhatItsMemberRuns: kwokctl's processes stop and start with their
// member, and a name outside the record is refused with the record's names.
func TestStopComponentRefusesWhatItsMemberRuns(t *testing.T) {
	l := flinkLab(t, "3")
	ctx := context.Background()
	if err := l.StopComponent(ctx, "member1/etcd", true); err == nil || !strings.Contains(err.Error(), "with its member: the component member1") {
		t.Errorf("stop member1/etcd: %v", err)
	}
	if err := l.StartComponent(ctx, "member1/kube-apiserver", lab.StartOptions{}); err == nil || !strings.Contains(err.Error(), "with its member") {
		t.Errorf("start member1/kube-apiserver: %v", err)
	}
	if err := l.StopComponent(ctx, "member4", true); err == nil || !strings.Contains(err.Error(), `no component "member4"`) {
		t.Errorf("stop member4: %v", err)
	}
}
