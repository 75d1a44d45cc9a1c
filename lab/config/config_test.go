package config

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/karmada-failover/lab/restore/cmd/flink-restore-webhook/app/options"
)

func TestLoadDefaultsAndPortsAreDistinct(t *testing.T) {
	for _, k := range []string{"LAB_PROVIDER", "LAB_KARMADA", "LAB_MEMBERS", "LAB_DIR"} {
		t.Setenv(k, "")
	}
	root := t.TempDir()
	c, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider != ProviderLocal || c.Karmada != FlavourPatched || c.Members != 3 {
		t.Fatalf("defaults: provider %s, karmada %s, members %d", c.Provider, c.Karmada, c.Members)
	}
	if c.Dir != filepath.Join(root, "_output", "lab") {
		t.Fatalf("Dir = %s", c.Dir)
	}
	// Every port of the largest lab is unique, and below the ephemeral range.
	seen := map[int]string{}
	count := 0
	for i := 1; i <= 20; i++ {
		mp := c.Ports.Member(Member(i))
		for _, p := range []int{mp.APIServer, mp.Etcd, mp.EtcdPeer, mp.ControllerManager, mp.Scheduler, mp.KwokController, mp.Link, mp.LinkControl} {
			if other, ok := seen[p]; ok {
				t.Fatalf("member%d port %d also used by %s", i, p, other)
			}
			seen[p] = Member(i).Name()
			count++
		}
	}
	// The ports of the other components (control plane, runners, webhooks) are checked with
	// the record that declares them (lab/local TestRecordListsEveryComponent).
	if count != 20*8 {
		t.Fatalf("%d member ports, want %d", count, 20*8)
	}
}

func TestLoadRejectsBadValues(t *testing.T) {
	for _, tc := range []struct{ key, value, want string }{
		{"LAB_MEMBERS", "0", "LAB_MEMBERS"},
		{"LAB_MEMBERS", "three", "LAB_MEMBERS"},
		{"LAB_PROVIDER", "docker", "LAB_PROVIDER"},
		{"LAB_KARMADA", "v1.17", "LAB_KARMADA"},
		{"LAB_FAILOVER_HISTORY_LIMIT", "101", "LAB_FAILOVER_HISTORY_LIMIT"},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.key, tc.value)
			_, err := Load(t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load with %s=%s: %v", tc.key, tc.value, err)
			}
		})
	}
}

func TestBinaryDiscovery(t *testing.T) {
	root := t.TempDir()
	kube := filepath.Join(root, "_output", "bin", "kubernetes-v1.35.8")
	if err := os.MkdirAll(kube, 0o755); err != nil {
		t.Fatal(err)
	}
	env := "KUBERNETES_BIN=" + kube + "\n# a comment\nETCD_BIN=/opt/etcd\n"
	if err := os.WriteFile(filepath.Join(root, BinariesEnvFile), []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LAB_BIN_KUBECTL", "/usr/local/bin/my-kubectl")
	b := discoverBinaries(root, FlavourUpstream)
	if b.KubeAPIServer != filepath.Join(kube, "kube-apiserver") {
		t.Errorf("kube-apiserver from the env file: %s", b.KubeAPIServer)
	}
	if b.Etcd != "/opt/etcd/etcd" {
		t.Errorf("etcd: %s", b.Etcd)
	}
	if b.Kubectl != "/usr/local/bin/my-kubectl" {
		t.Errorf("LAB_BIN_KUBECTL does not win: %s", b.Kubectl)
	}
	if b.KarmadaScheduler != filepath.Join(root, "_output", "bin", "upstream", "karmada-scheduler") {
		t.Errorf("karmada binaries of the flavour: %s", b.KarmadaScheduler)
	}
	err := b.Check()
	if err == nil || !strings.Contains(err.Error(), "kube-apiserver") || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("Check of a tree without binaries: %v", err)
	}
}

// TestRestoreWebhookPortIsTheWebhooksDefault: the lab's restore webhook ports (24600 + member
// index) start at the webhook's own default address, which the deploy examples use.
func TestRestoreWebhookPortIsTheWebhooksDefault(t *testing.T) {
	cfg, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if want := net.JoinHostPort(Host, strconv.Itoa(cfg.Ports.RestoreWebhook)); options.DefaultListen != want {
		t.Errorf("the webhook listens on %s by default, the lab's ports start at %s", options.DefaultListen, want)
	}
}

func TestMemberByName(t *testing.T) {
	c := &Config{Members: 3}
	if got := c.MemberList(); len(got) != 3 || got[0].Name() != "member1" || got[2].Name() != "member3" {
		t.Fatalf("MemberList = %v", got)
	}
	m, err := c.Member("member2")
	if err != nil || m != 2 {
		t.Fatalf(`Member("member2") = %v, %v`, m, err)
	}
	// Names of no member: beyond the lab's count, a host cluster's, a number
	// without the prefix, and a prefix with a sign a parser would accept.
	for _, name := range []string{"member4", "member0", "karmada-host", "2", "member+2", "member02", ""} {
		if m, err := c.Member(name); err == nil || !strings.Contains(err.Error(), "member1..member3") {
			t.Errorf("Member(%q) = %v, %v: want an error naming the lab's members", name, m, err)
		}
	}
}
