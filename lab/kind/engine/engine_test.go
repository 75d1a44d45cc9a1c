package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestBoundingSet(t *testing.T) {
	dir := t.TempDir()
	status := filepath.Join(dir, "status")
	// The bounding set of the machines the kind lab was first run on: all of
	// 0..40 but CAP_SYS_RESOURCE (24).
	if err := os.WriteFile(status, []byte("Name:\tsh\nCapInh:\t0000000000000000\nCapBnd:\t000001fffeffffff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bnd, err := ReadBoundingSet(status)
	if err != nil {
		t.Fatal(err)
	}
	if got := bnd.Missing(40); !reflect.DeepEqual(got, []string{"CAP_SYS_RESOURCE"}) {
		t.Errorf("Missing(40) = %v, want [CAP_SYS_RESOURCE]", got)
	}
	if bnd.Has("CAP_SYS_RESOURCE") || !bnd.Has("CAP_SYS_ADMIN") || !bnd.Has("CAP_SOMETHING_NEW") {
		t.Errorf("Has: SYS_RESOURCE %v, SYS_ADMIN %v, unknown %v; want false, true, true",
			bnd.Has("CAP_SYS_RESOURCE"), bnd.Has("CAP_SYS_ADMIN"), bnd.Has("CAP_SOMETHING_NEW"))
	}
	// A kernel older than CAP_CHECKPOINT_RESTORE: only what it has counts.
	if got := BoundingSet(0xffffffffff).Missing(39); len(got) != 0 {
		t.Errorf("full set up to 39: Missing = %v, want none", got)
	}
	if err := os.WriteFile(status, []byte("Name:\tsh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBoundingSet(status); err == nil || !strings.Contains(err.Error(), "no CapBnd") {
		t.Errorf("status without CapBnd: err = %v, want it named", err)
	}
}

func TestParseRuntimeCall(t *testing.T) {
	for _, tc := range []struct {
		name            string
		args            []string
		runc, command   string
		spec            string
		passedArgsFirst string
	}{
		{name: "create as containerd's shim calls it",
			args: []string{"--lab-runc=/usr/sbin/runc", "--root", "/run/runc", "--log", "/x/log.json", "--log-format", "json", "create", "--bundle", "/b/c1", "--pid-file", "/b/c1/init.pid", "c1"},
			runc: "/usr/sbin/runc", command: "create", spec: "/b/c1/config.json", passedArgsFirst: "--root"},
		{name: "create with --bundle=",
			args: []string{"create", "--bundle=/b/c2", "c2"}, runc: "runc", command: "create", spec: "/b/c2/config.json", passedArgsFirst: "create"},
		{name: "run without a bundle: the working folder",
			args: []string{"--lab-runc=/r", "run", "c3"}, runc: "/r", command: "run", spec: "/cwd/config.json", passedArgsFirst: "run"},
		{name: "exec with a process spec (docker exec)",
			args: []string{"--lab-runc=/r", "--root", "/run/runc", "exec", "--process", "/tmp/runc-process1", "--detach", "--pid-file", "/p", "c1"},
			runc: "/r", command: "exec", spec: "/tmp/runc-process1", passedArgsFirst: "--root"},
		{name: "exec -p", args: []string{"exec", "-p", "/tmp/p2", "c1"}, runc: "runc", command: "exec", spec: "/tmp/p2", passedArgsFirst: "exec"},
		{name: "exec of arguments keeps the container's capabilities",
			args: []string{"exec", "c1", "ls"}, runc: "runc", command: "exec", spec: "", passedArgsFirst: "exec"},
		{name: "other commands pass through",
			args: []string{"--lab-runc=/r", "--root", "/run/runc", "kill", "c1", "9"}, runc: "/r", command: "kill", spec: "", passedArgsFirst: "--root"},
		{name: "version", args: []string{"--lab-runc=/r", "--version"}, runc: "/r", command: "", spec: "", passedArgsFirst: "--version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseRuntimeCall(tc.args, "/cwd")
			if err != nil {
				t.Fatal(err)
			}
			if c.Runc != tc.runc || c.Command != tc.command || c.SpecFile != tc.spec {
				t.Errorf("got runc %q command %q spec %q, want %q %q %q", c.Runc, c.Command, c.SpecFile, tc.runc, tc.command, tc.spec)
			}
			for _, a := range c.Args {
				if strings.HasPrefix(a, RuncFlag) {
					t.Errorf("runc would get the wrapper's own flag: %v", c.Args)
				}
			}
			if len(c.Args) == 0 || c.Args[0] != tc.passedArgsFirst {
				t.Errorf("runc's arguments %v, want them to start with %q", c.Args, tc.passedArgsFirst)
			}
		})
	}
	if _, err := ParseRuntimeCall([]string{"exec", "--process"}, "/"); err == nil {
		t.Error("exec --process without a value: want an error")
	}
}

func TestFitCapabilities(t *testing.T) {
	bnd := BoundingSet(0x1fffeffffff) // all of 0..40 but CAP_SYS_RESOURCE
	all := []any{"CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_SYS_RESOURCE", "CAP_CHECKPOINT_RESTORE"}
	capsDoc := func() map[string]any {
		return map[string]any{"bounding": all, "effective": all, "permitted": all, "inheritable": all, "ambient": []any{"CAP_SYS_RESOURCE"}}
	}
	dir := t.TempDir()
	write := func(name string, doc any) string {
		p := filepath.Join(dir, name)
		b, _ := json.Marshal(doc)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(p string) map[string]any {
		var doc map[string]any
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	want := []any{"CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_CHECKPOINT_RESTORE"}

	bundle := write("config.json", map[string]any{"ociVersion": "1.0.2", "hostname": "kind-node",
		"process": map[string]any{"args": []any{"/sbin/init"}, "capabilities": capsDoc()}})
	removed, err := FitCapabilities(bundle, bnd, false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(removed, []string{"CAP_SYS_RESOURCE"}) {
		t.Errorf("removed %v, want [CAP_SYS_RESOURCE]", removed)
	}
	doc := read(bundle)
	caps := doc["process"].(map[string]any)["capabilities"].(map[string]any)
	for _, set := range []string{"bounding", "effective", "permitted", "inheritable"} {
		if !reflect.DeepEqual(caps[set], want) {
			t.Errorf("%s = %v, want %v", set, caps[set], want)
		}
	}
	if got := caps["ambient"].([]any); len(got) != 0 {
		t.Errorf("ambient = %v, want empty", got)
	}
	if doc["hostname"] != "kind-node" || doc["process"].(map[string]any)["args"].([]any)[0] != "/sbin/init" {
		t.Errorf("the rest of the spec changed: %v", doc)
	}
	if info, _ := os.Stat(bundle); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", info.Mode().Perm())
	}

	process := write("process.json", map[string]any{"args": []any{"sh"}, "capabilities": capsDoc()})
	if _, err := FitCapabilities(process, bnd, true); err != nil {
		t.Fatal(err)
	}
	if got := read(process)["capabilities"].(map[string]any)["effective"]; !reflect.DeepEqual(got, want) {
		t.Errorf("exec process effective = %v, want %v", got, want)
	}

	// Nothing to remove: the file is not rewritten.
	fits := write("fits.json", map[string]any{"process": map[string]any{"capabilities": map[string]any{"bounding": want}}})
	before, _ := os.ReadFile(fits)
	if removed, err := FitCapabilities(fits, bnd, false); err != nil || removed != nil {
		t.Errorf("spec that fits: removed %v, err %v", removed, err)
	}
	if after, _ := os.ReadFile(fits); string(after) != string(before) {
		t.Error("a spec that fits was rewritten")
	}
	if _, err := FitCapabilities(write("bad.json", "x")[:len(dir)]+"/missing.json", bnd, false); err == nil {
		t.Error("missing spec: want an error")
	}
}

func TestDaemonConfig(t *testing.T) {
	b, err := DaemonConfig("/lab/_output/bin/lab-oci-runtime", "/usr/sbin/runc")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Runtimes map[string]struct {
			Path        string   `json:"path"`
			RuntimeArgs []string `json:"runtimeArgs"`
		} `json:"runtimes"`
		DefaultRuntime string `json:"default-runtime"`
		Pools          []struct {
			Base string `json:"base"`
			Size int    `json:"size"`
		} `json:"default-address-pools"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	rt := cfg.Runtimes[cfg.DefaultRuntime]
	if cfg.DefaultRuntime != RuntimeName || rt.Path != "/lab/_output/bin/lab-oci-runtime" || !reflect.DeepEqual(rt.RuntimeArgs, []string{"--lab-runc=/usr/sbin/runc"}) {
		t.Errorf("default runtime %q = %+v", cfg.DefaultRuntime, rt)
	}
	if len(cfg.Pools) != 1 || cfg.Pools[0].Base != AddressPool {
		t.Errorf("address pools %+v, want the lab's %s", cfg.Pools, AddressPool)
	}
	// Everything the lab's dockerd keeps is its own: nothing of a user's engine.
	o := Options{Dir: "/lab/_output/kind/docker"}
	args := strings.Join(o.DaemonArgs(), " ")
	for _, want := range []string{"--host unix:///lab/_output/kind/docker/docker.sock", "--data-root /lab/_output/kind/docker/data",
		"--pidfile /lab/_output/kind/docker/daemon.pid", "--config-file /lab/_output/kind/docker/daemon.json", "--bridge " + o.Bridge(), "--exec-root "} {
		if !strings.Contains(args, want) {
			t.Errorf("dockerd %s: missing %q", args, want)
		}
	}
	if strings.Contains(args, "/var/run/docker") || strings.Contains(args, "/var/lib/docker") || strings.Contains(args, "/etc/docker") {
		t.Errorf("dockerd %s touches the machine's engine", args)
	}
	if len(o.Bridge()) > 15 {
		t.Errorf("bridge name %q longer than Linux's 15 characters", o.Bridge())
	}
	if other := (Options{Dir: "/other/_output/kind/docker"}); other.Bridge() == o.Bridge() || other.execRoot() == o.execRoot() {
		t.Error("two checkouts share a bridge or an exec root")
	}
}

// fakeDocker puts a docker command on PATH that answers info and run as told.
func fakeDocker(t *testing.T, info, run string) []string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\ncase \"$1\" in\n" +
		"info) " + info + ";;\n" +
		"run) " + run + ";;\n" +
		"*) cat >/dev/null 2>&1; exit 0;;\nesac\n"
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + dir + ":/usr/bin:/bin", "DOCKER_HOST=unix:///var/run/user-docker.sock"}
}

func TestChoose(t *testing.T) {
	dir := t.TempDir()
	runtime := filepath.Join(dir, "lab-oci-runtime")
	if err := os.WriteFile(runtime, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	status := filepath.Join(dir, "status")
	if err := os.WriteFile(status, []byte("CapBnd:\t000001fffeffffff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := Options{Dir: filepath.Join(dir, "docker"), Runtime: runtime, StatusFile: status, CapLastCapFile: filepath.Join(dir, "none")}
	ctx := context.Background()

	// A laptop's engine that runs privileged containers: the lab uses it as it is.
	o := base
	o.Env = fakeDocker(t, "echo 28.2.2", "exit 0")
	e, err := Choose(ctx, o)
	if err != nil || e.Own || e.Host != "unix:///var/run/user-docker.sock" || !strings.Contains(e.Reason, "runs privileged containers") {
		t.Errorf("privileged engine: got %+v, %v; want the machine's engine", e, err)
	}
	if len(e.Env()) != 1 || e.Env()[0] != "DOCKER_HOST=unix:///var/run/user-docker.sock" {
		t.Errorf("Env() = %v", e.Env())
	}

	// An engine that refuses privileged containers: the reason names runc's
	// error and the missing capability, and LAB_DOCKER=system fails with it.
	o.Env = fakeDocker(t, "echo 20.10.24", "echo 'runc create failed: unable to apply caps: operation not permitted' >&2; exit 125")
	o.Mode = ModeSystem
	_, err = Choose(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "unable to apply caps") || !strings.Contains(err.Error(), "lacks CAP_SYS_RESOURCE") {
		t.Errorf("LAB_DOCKER=system on an engine without privileged containers: err = %v", err)
	}
	o.Mode = ModeAuto
	e, err = Choose(ctx, o)
	// Whether this machine can run the lab's own dockerd (root, dockerd on
	// PATH) decides between an engine and an error; either says why.
	why := "cannot run a privileged container"
	if err != nil {
		if !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "the lab cannot run a dockerd of its own") && !strings.Contains(err.Error(), "needs root") {
			t.Errorf("auto, no privileged containers: err = %v", err)
		}
	} else if !e.Own || e.Host != base.Host() || !strings.Contains(e.Reason, why) {
		t.Errorf("auto, no privileged containers: got %+v, want the lab's own dockerd with the reason", e)
	}

	// No engine answers: LAB_DOCKER=system fails naming the address.
	o.Env = fakeDocker(t, "echo 'Cannot connect to the Docker daemon' >&2; exit 1", "exit 0")
	o.Mode = ModeSystem
	if _, err := Choose(ctx, o); err == nil || !strings.Contains(err.Error(), "needs a running Docker engine, and the Docker engine at unix:///var/run/user-docker.sock does not answer") {
		t.Errorf("no engine, system: err = %v", err)
	}
	o.Mode = "docker"
	if _, err := Choose(ctx, o); err == nil || !strings.Contains(err.Error(), `LAB_DOCKER="docker"`) {
		t.Errorf("bad mode: err = %v", err)
	}
}

// Stop detaches what a dockerd that died left mounted in its exec root: only what is
// below it, deepest first, with the kernel's escapes undone.
func TestMountsUnder(t *testing.T) {
	info := `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
531 22 0:4 net:[4026532301] /tmp/kfl-docker-ffb222/netns/82a52f4f1cb8 rw shared:1 - nsfs nsfs rw
532 22 0:4 net:[4026532302] /tmp/kfl-docker-ffb222/netns rw shared:1 - nsfs nsfs rw
533 22 0:4 net:[4026532303] /tmp/kfl-docker-ffb222x/netns/aa rw shared:1 - nsfs nsfs rw
534 22 0:4 net:[4026532304] /tmp/kfl-docker-ffb222/with\040space rw shared:1 - nsfs nsfs rw
`
	got := MountsUnder(info, "/tmp/kfl-docker-ffb222")
	want := []string{"/tmp/kfl-docker-ffb222/netns/82a52f4f1cb8", "/tmp/kfl-docker-ffb222/with space", "/tmp/kfl-docker-ffb222/netns"}
	if !slices.Equal(got, want) {
		t.Fatalf("MountsUnder = %q, want %q", got, want)
	}
}
