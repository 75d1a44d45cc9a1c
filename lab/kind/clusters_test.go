package kind

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	kindlog "sigs.k8s.io/kind/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/karmada-failover/lab/lab/config"
)

func testConfig(t *testing.T) *config.Config {
	t.Helper()
	t.Setenv("LAB_PROVIDER", "kind")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// useDockerShim puts testdata/shim/docker first on PATH and returns the file
// its calls are logged to.
func useDockerShim(t *testing.T, mode string) string {
	t.Helper()
	shim, err := filepath.Abs("testdata/shim")
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "docker-calls.log")
	t.Setenv("PATH", shim+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("DOCKER_SHIM_LOG", logFile)
	t.Setenv("DOCKER_SHIM_MODE", mode)
	return logFile
}

// TestClusterConfigsLoadAndValidateWithKind hands each generated configuration
// to kind's own cluster-create code (its loader, defaulting and validation) with
// a docker stand-in that refuses to provision: kind must get past validation to
// the point where it asks for the pinned node image.
func TestClusterConfigsLoadAndValidateWithKind(t *testing.T) {
	cfg := testConfig(t)
	built := Node{Image: "karmada-failover-lab/kind-node:v1.35.8-0123456789ab", Built: true, EtcdImageTag: "3.6.16-0"}
	for _, node := range []Node{PulledNode, built} {
		paths, err := WriteClusterConfigs(cfg, t.TempDir(), node)
		if err != nil {
			t.Fatal(err)
		}
		if len(paths) != cfg.Members+1 {
			t.Fatalf("%d configs, want host + %d members", len(paths), cfg.Members)
		}
		calls := useDockerShim(t, "")
		provider := cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(kindlog.NoopLogger{}))
		for name, path := range paths {
			_ = os.Remove(calls)
			err := provider.Create(name, cluster.CreateWithConfigFile(path), cluster.CreateWithKubeconfigPath(filepath.Join(t.TempDir(), "kubeconfig")))
			if err == nil {
				t.Fatalf("%s: kind created a cluster through the docker stand-in", name)
			}
			log, _ := os.ReadFile(calls)
			if !strings.Contains(string(log), node.Image) {
				t.Errorf("%s (%s): kind stopped before provisioning (%v); docker calls:\n%s", name, node.Image, err, log)
			}
		}
	}
}

// TestBuiltNodeClusterConfig: a node the lab built runs without kindnetd and
// with the lab's etcd tag; every node tolerates a cgroup v1 host.
func TestBuiltNodeClusterConfig(t *testing.T) {
	cfg := testConfig(t)
	built := Node{Image: "karmada-failover-lab/kind-node:v1.35.8-0123456789ab", Built: true, EtcdImageTag: "3.6.16-0"}
	c, err := ClusterConfig(cfg, config.Member(1).Name(), built)
	if err != nil {
		t.Fatal(err)
	}
	patches := strings.Join(c.KubeadmConfigPatches, "---\n")
	if !c.Networking.DisableDefaultCNI || c.Nodes[0].Image != built.Image ||
		!strings.Contains(patches, "failCgroupV1: false") || !strings.Contains(patches, "imageTag: 3.6.16-0") {
		t.Errorf("built node: DisableDefaultCNI %v, image %q, patches:\n%s", c.Networking.DisableDefaultCNI, c.Nodes[0].Image, patches)
	}
	c, err = ClusterConfig(cfg, config.Member(1).Name(), PulledNode)
	if err != nil {
		t.Fatal(err)
	}
	patches = strings.Join(c.KubeadmConfigPatches, "---\n")
	if c.Networking.DisableDefaultCNI || strings.Contains(patches, "imageTag") || !strings.Contains(patches, "failCgroupV1: false") {
		t.Errorf("pulled node: DisableDefaultCNI %v, patches:\n%s", c.Networking.DisableDefaultCNI, patches)
	}
	if _, err := ClusterConfig(cfg, HostCluster, Node{Image: built.Image, Built: true}); err == nil {
		t.Error("built node without an etcd tag: want an error")
	}
}

// TestKindRejectsAnInvalidConfig shows that the check above can fail: kind's
// validation refuses a configuration and never reaches the provisioning calls.
func TestKindRejectsAnInvalidConfig(t *testing.T) {
	cfg := testConfig(t)
	c, err := ClusterConfig(cfg, HostCluster, PulledNode)
	if err != nil {
		t.Fatal(err)
	}
	c.Nodes[0].Role = v1alpha4.WorkerRole // no control-plane node
	b, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	calls := useDockerShim(t, "")
	provider := cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(kindlog.NoopLogger{}))
	err = provider.Create("bad", cluster.CreateWithConfigFile(path))
	if err == nil || !strings.Contains(err.Error(), "control-plane") {
		t.Fatalf("want kind's validation error about the control-plane node, got %v", err)
	}
	if log, _ := os.ReadFile(calls); strings.Contains(string(log), NodeImage) {
		t.Fatalf("kind went on to provisioning:\n%s", log)
	}
}

func TestClusterConfigsArePinnedAndLocal(t *testing.T) {
	cfg := testConfig(t)
	if !regexp.MustCompile(`^kindest/node:v1\.35\.\d+@sha256:[0-9a-f]{64}$`).MatchString(NodeImage) {
		t.Errorf("node image %q: want kindest/node v1.35.x pinned by digest", NodeImage)
	}
	seen := map[int32]string{}
	for _, name := range ClusterNames(cfg) {
		c, err := ClusterConfig(cfg, name, PulledNode)
		if err != nil {
			t.Fatal(err)
		}
		ports := []int32{c.Networking.APIServerPort}
		if c.Networking.APIServerAddress != config.Host {
			t.Errorf("%s: API server on %q, want %s", name, c.Networking.APIServerAddress, config.Host)
		}
		for _, n := range c.Nodes {
			if n.Image != NodeImage {
				t.Errorf("%s: node image %q", name, n.Image)
			}
			for _, m := range n.ExtraPortMappings {
				if m.ListenAddress != config.Host {
					t.Errorf("%s: port %d listens on %q, want %s", name, m.HostPort, m.ListenAddress, config.Host)
				}
				ports = append(ports, m.HostPort)
			}
		}
		for _, p := range ports {
			if p <= 1024 || p >= 32768 {
				t.Errorf("%s: host port %d outside 1025-32767", name, p)
			}
			if other, dup := seen[p]; dup {
				t.Errorf("host port %d used by %s and %s", p, other, name)
			}
			seen[p] = name
		}
	}
	if _, err := ClusterConfig(cfg, "member99", PulledNode); err == nil {
		t.Error("a cluster outside the lab got a configuration")
	}
}

// TestPreflightFailsFastWithoutDocker runs lab/kind/preflight.sh against a docker
// CLI that is missing, that cannot reach an engine, that hangs, that has no
// buildx; with inotify limits too low for four kind clusters; and without the
// host tools. Each fails within seconds, saying what to do.
func TestPreflightFailsFastWithoutDocker(t *testing.T) {
	script, err := filepath.Abs("preflight.sh")
	if err != nil {
		t.Fatal(err)
	}
	// A PATH with the tools the script needs but no docker.
	bare := t.TempDir()
	// No GNU timeout: the script must not need it (macOS has none).
	for _, tool := range []string{"bash", "grep", "mktemp", "rm", "head", "sleep"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(bare, tool)); err != nil {
			t.Fatal(err)
		}
	}
	shim, _ := filepath.Abs("testdata/shim")
	// inotify limits as /proc shows them: kind's recommended ones, and Linux's defaults.
	proc := func(instances, watches string) string {
		root := t.TempDir()
		dir := filepath.Join(root, "sys", "fs", "inotify")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]string{"max_user_instances": instances, "max_user_watches": watches} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	enough, linuxDefaults := proc("512", "524288"), proc("128", "8192")
	cases := []struct {
		name, path, mode, proc, want string
	}{
		{"no docker command", bare, "", enough, "needs Docker, and there is no docker command on PATH"},
		{"engine down", shim + ":" + bare, "down", enough, "Cannot connect to the Docker daemon"},
		{"engine hangs", shim + ":" + bare, "hang", enough, "running Docker engine, and 'docker info' reached none within 10s: timed out"},
		{"no buildx", shim + ":" + bare, "nobuildx", enough, "docker buildx version"},
		// LAB_IMAGES=build imports its images: no buildx needed, the next check stops it.
		{"no buildx, images built", shim + ":" + bare, "nobuildx", enough, "needs make"},
		{"inotify limits too low", shim + ":" + bare, "", linuxDefaults, "sudo sysctl fs.inotify.max_user_instances=512 fs.inotify.max_user_watches=524288"},
		// The engine is fine: the first missing host tool (no make, java, mvn on this PATH) stops it.
		{"host tools missing", shim + ":" + bare, "", enough, "needs make"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(script)
			images := ImagesPull
			if strings.HasSuffix(tc.name, "images built") {
				images = ImagesBuild
			}
			cmd.Env = []string{"PATH=" + tc.path, "DOCKER_SHIM_MODE=" + tc.mode, "PREFLIGHT_PROC_ROOT=" + tc.proc, "LAB_IMAGES=" + images}
			start := time.Now()
			out, err := cmd.CombinedOutput()
			took := time.Since(start)
			if err == nil {
				t.Fatalf("preflight passed:\n%s", out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("message does not say %q:\n%s", tc.want, out)
			}
			if took > 15*time.Second {
				t.Errorf("preflight took %s", took)
			}
		})
	}
}
