// Package engine chooses the Docker engine the kind lab runs on, and runs the
// lab's own dockerd where the machine's engine cannot run kind's nodes.
//
// kind runs every node as a privileged container and drives it with docker
// exec --privileged. On a machine whose capability bounding set lacks a
// capability a privileged container asks for (some VMs and sandboxes drop
// CAP_SYS_RESOURCE), runc refuses both: "unable to apply caps". The lab never
// changes a user's Docker configuration; it runs a dockerd of its own instead:
// its own socket, data root, exec root, pid file, bridge and address pool, with
// lab-oci-runtime (which fits each container's capabilities to the bounding
// set) as its default runtime, started and stopped by the lab, and the lab's
// tools pointed at it with DOCKER_HOST.
package engine

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/karmada-failover/lab/lab/internal/proc"
)

// Modes of LAB_DOCKER.
const (
	// ModeAuto uses the machine's engine when it runs privileged containers,
	// otherwise the lab's own dockerd.
	ModeAuto = "auto"
	// ModeSystem uses the machine's engine (DOCKER_HOST or docker's default).
	ModeSystem = "system"
	// ModeLab always runs the lab's own dockerd.
	ModeLab = "lab"
)

// ProbeFlag makes lab-oci-runtime exit 0 at once: the privileged-container
// probe runs it inside a one-file image.
const ProbeFlag = "--lab-probe"

// probeImage is the one-file image of the probe; removed after each probe.
const probeImage = "karmada-failover-lab/engine-probe:latest"

// Options says where the lab's dockerd lives and what it runs.
type Options struct {
	// Dir holds the lab's dockerd: socket, data root, pid file, config, log.
	Dir string
	// Runtime is the lab-oci-runtime binary.
	Runtime string
	// Mode is LAB_DOCKER: auto (default), system or lab.
	Mode string
	// Env is the environment the docker command runs with (os.Environ()
	// when nil); its DOCKER_HOST is the machine's engine.
	Env []string
	// StatusFile and CapLastCapFile are /proc/self/status and
	// /proc/sys/kernel/cap_last_cap (tests give others).
	StatusFile, CapLastCapFile string
}

func (o Options) env() []string {
	if o.Env == nil {
		return os.Environ()
	}
	return o.Env
}

func (o Options) statusFile() string {
	if o.StatusFile == "" {
		return "/proc/self/status"
	}
	return o.StatusFile
}

func (o Options) capLastCapFile() string {
	if o.CapLastCapFile == "" {
		return "/proc/sys/kernel/cap_last_cap"
	}
	return o.CapLastCapFile
}

// Engine is the Docker engine the lab uses.
type Engine struct {
	// Host is the engine's DOCKER_HOST; "" is docker's default.
	Host string
	// Own tells that it is the lab's own dockerd.
	Own bool
	// Reason says why the lab uses it.
	Reason string
}

// Env is what the lab's docker, kind and build commands run with.
func (e Engine) Env() []string {
	if e.Host == "" {
		return nil
	}
	return []string{"DOCKER_HOST=" + e.Host}
}

func (e Engine) String() string {
	who := "the machine's Docker engine"
	if e.Own {
		who = "the lab's own dockerd"
	}
	if e.Host != "" {
		who += " (" + e.Host + ")"
	}
	return who + ": " + e.Reason
}

// Paths of the lab's dockerd.
func (o Options) socket() string     { return filepath.Join(o.Dir, "docker.sock") }
func (o Options) pidFile() string    { return filepath.Join(o.Dir, "daemon.pid") }
func (o Options) configFile() string { return filepath.Join(o.Dir, "daemon.json") }
func (o Options) dataRoot() string   { return filepath.Join(o.Dir, "data") }

// procs tracks the lab's dockerd by PID (lab/internal/proc): its PID file is
// Dir/dockerd.pid, its output Dir/dockerd.log.
func (o Options) procs() *proc.Manager { return &proc.Manager{PIDDir: o.Dir, LogDir: o.Dir} }

// dockerdName is the lab's dockerd in procs().
const dockerdName = "dockerd"

// Host is the DOCKER_HOST of the lab's dockerd.
func (o Options) Host() string { return "unix://" + o.socket() }

// id tells this lab's dockerd from another checkout's: it names the bridge
// and the exec root.
func (o Options) id() string {
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		abs = o.Dir
	}
	sum := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(sum[:])[:6]
}

// Bridge is the lab's dockerd's default bridge (Linux allows 15 characters).
func (o Options) Bridge() string { return "kfl" + o.id() + "br0" }

// execRoot holds containerd's sockets, whose paths must stay short (a unix
// socket's path has at most 107 bytes), so it is not under Dir.
func (o Options) execRoot() string { return filepath.Join(os.TempDir(), "kfl-docker-"+o.id()) }

// Address ranges of the lab's dockerd: the default bridge and the pool that
// user-defined networks (kind's) take their subnets from.
const (
	BridgeCIDR  = "10.213.0.1/24"
	AddressPool = "10.214.0.0/16"
)

// Current is the engine a running lab uses: the lab's own dockerd when it
// runs, otherwise the machine's. It starts nothing.
func Current(o Options) Engine {
	if pid, ok := o.runningPID(); ok {
		return Engine{Host: o.Host(), Own: true, Reason: "the lab's dockerd runs (pid " + strconv.Itoa(pid) + ")"}
	}
	return Engine{Host: envValue(o.env(), "DOCKER_HOST"), Reason: "the lab's own dockerd is not running"}
}

// Choose decides which engine the lab will use, and why, starting nothing.
// In auto mode it asks the machine's engine, then runs a privileged container
// of a one-file image on it (and removes the image again); where that fails,
// or no engine answers, and this machine can run a dockerd, the lab runs its
// own.
func Choose(ctx context.Context, o Options) (Engine, error) {
	mode := o.Mode
	if mode == "" {
		mode = ModeAuto
	}
	machine := envValue(o.env(), "DOCKER_HOST")
	if machine == o.Host() {
		// DOCKER_HOST from `lab env` of a running lab: the machine's engine is docker's default.
		machine = ""
	}
	switch mode {
	case ModeLab:
		return o.own(fmt.Sprintf("LAB_DOCKER=%s", ModeLab))
	case ModeSystem, ModeAuto:
	default:
		return Engine{}, fmt.Errorf("LAB_DOCKER=%q: want %q (default), %q or %q", mode, ModeAuto, ModeSystem, ModeLab)
	}
	env := withDockerHost(o.env(), machine)
	name := "the Docker engine at " + hostName(machine)
	if _, err := dockerOut(ctx, env, 10*time.Second, "info", "--format", "{{.ServerVersion}}"); err != nil {
		if mode == ModeSystem {
			return Engine{}, fmt.Errorf("LAB_DOCKER=%s: the kind lab needs a running Docker engine, and %s does not answer: %w", ModeSystem, name, err)
		}
		return o.own(fmt.Sprintf("%s does not answer (%v)", name, firstLine(err.Error())))
	}
	probeErr := o.probePrivileged(ctx, env)
	if probeErr == nil {
		return Engine{Host: machine, Reason: name + " runs privileged containers"}, nil
	}
	why := fmt.Sprintf("%s cannot run a privileged container (%s)", name, firstLine(probeErr.Error()))
	if missing := o.missingCaps(); len(missing) > 0 {
		why += "; this machine's capability bounding set lacks " + strings.Join(missing, ", ")
	}
	if mode == ModeSystem {
		return Engine{}, fmt.Errorf("LAB_DOCKER=%s: %s", ModeSystem, why)
	}
	return o.own(why)
}

// missingCaps lists the capabilities this process's bounding set lacks.
func (o Options) missingCaps() []string {
	bnd, err := ReadBoundingSet(o.statusFile())
	if err != nil {
		return nil
	}
	return bnd.Missing(LastCap(o.capLastCapFile()))
}

// own is the lab's own dockerd, if this machine can run one.
func (o Options) own(why string) (Engine, error) {
	if pid, ok := o.runningPID(); ok {
		return Engine{Host: o.Host(), Own: true, Reason: why + "; the lab's dockerd runs (pid " + strconv.Itoa(pid) + ")"}, nil
	}
	var missing []string
	for _, bin := range []string{"dockerd", "containerd", "runc", "ip"} {
		if _, err := exec.LookPath(bin); err != nil {
			missing = append(missing, bin)
		}
	}
	if len(missing) > 0 {
		return Engine{}, fmt.Errorf("%s, and the lab cannot run a dockerd of its own (the kind lab needs a running Docker engine): %s not on PATH (Debian/Ubuntu, as root: hack/install-prereqs.sh --kind, or apt-get install docker.io)", why, strings.Join(missing, ", "))
	}
	if os.Geteuid() != 0 {
		return Engine{}, fmt.Errorf("%s, and the lab's own dockerd needs root (run as root, or give the lab a Docker engine that runs privileged containers)", why)
	}
	if _, err := os.Stat(o.Runtime); err != nil {
		return Engine{}, fmt.Errorf("%s, and the lab's dockerd needs its OCI runtime %s: build it with make lab-cli", why, o.Runtime)
	}
	return Engine{Host: o.Host(), Own: true, Reason: why + "; the lab runs its own dockerd"}, nil
}

// probePrivileged runs `docker run --privileged` of a one-file image (the
// runtime wrapper, which exits at once) on the engine of env, then removes
// the image.
func (o Options) probePrivileged(ctx context.Context, env []string) error {
	bin, err := os.ReadFile(o.Runtime)
	if err != nil {
		return fmt.Errorf("the probe needs %s (make lab-cli): %w", o.Runtime, err)
	}
	var img bytes.Buffer
	tw := tar.NewWriter(&img)
	if err := tw.WriteHeader(&tar.Header{Name: "lab-probe", Mode: 0o755, Size: int64(len(bin)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := tw.Write(bin); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if _, err := dockerIn(ctx, env, 2*time.Minute, &img, "import", "-", probeImage); err != nil {
		return err
	}
	defer dockerOut(context.WithoutCancel(ctx), env, time.Minute, "rmi", "--force", probeImage) //nolint:errcheck // best effort
	_, err = dockerOut(ctx, env, 2*time.Minute, "run", "--rm", "--privileged", "--network", "none", probeImage, "/lab-probe", ProbeFlag)
	return err
}

// Start starts the lab's dockerd, unless it runs, and waits until it answers.
// The daemon outlives the command that starts it (lab/internal/proc: its own
// session, its PID recorded); Stop ends it by that PID.
func Start(ctx context.Context, o Options) (Engine, error) {
	if pid, ok := o.runningPID(); ok {
		return Engine{Host: o.Host(), Own: true, Reason: "the lab's dockerd runs (pid " + strconv.Itoa(pid) + ")"}, nil
	}
	for _, d := range []string{o.Dir, o.dataRoot(), o.execRoot()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Engine{}, err
		}
	}
	if err := o.ensureBridge(ctx); err != nil {
		return Engine{}, err
	}
	runc, err := exec.LookPath("runc")
	if err != nil {
		return Engine{}, err
	}
	rt, err := filepath.Abs(o.Runtime)
	if err != nil {
		return Engine{}, err
	}
	cfg, err := DaemonConfig(rt, runc)
	if err != nil {
		return Engine{}, err
	}
	if err := os.WriteFile(o.configFile(), cfg, 0o644); err != nil {
		return Engine{}, err
	}
	dockerd, err := exec.LookPath("dockerd")
	if err != nil {
		return Engine{}, err
	}
	_ = os.Remove(o.socket())
	procs := o.procs()
	pid, err := procs.Start(proc.Spec{Name: dockerdName, Path: dockerd, Args: o.DaemonArgs()})
	if err != nil {
		return Engine{}, err
	}
	env := withDockerHost(os.Environ(), o.Host())
	deadline := time.Now().Add(90 * time.Second)
	for {
		if _, err := dockerOut(ctx, env, 5*time.Second, "version", "--format", "{{.Server.Version}}"); err == nil {
			break
		}
		if _, running := procs.Running(dockerdName); !running {
			return Engine{}, fmt.Errorf("the lab's dockerd exited; its log, %s:\n%s", procs.LogFile(dockerdName), procs.Tail(dockerdName, 15))
		}
		if time.Now().After(deadline) {
			_ = procs.Stop(dockerdName, 30*time.Second)
			return Engine{}, fmt.Errorf("the lab's dockerd did not answer on %s within 90s; its log, %s:\n%s", o.socket(), procs.LogFile(dockerdName), procs.Tail(dockerdName, 15))
		}
		select {
		case <-ctx.Done():
			_ = procs.Stop(dockerdName, 30*time.Second)
			return Engine{}, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return Engine{Host: o.Host(), Own: true, Reason: "the lab's dockerd runs (pid " + strconv.Itoa(pid) + ")"}, nil
}

// DaemonArgs are the lab's dockerd's flags: everything it keeps is its own.
func (o Options) DaemonArgs() []string {
	return []string{
		"--host", o.Host(),
		"--data-root", o.dataRoot(),
		"--exec-root", o.execRoot(),
		"--pidfile", o.pidFile(),
		"--config-file", o.configFile(),
		"--bridge", o.Bridge(),
	}
}

// RuntimeName is the lab's runtime in its dockerd's configuration.
const RuntimeName = "lab-runc"

// DaemonConfig is the lab's dockerd's daemon.json: lab-oci-runtime as the
// default runtime, handing each call to runc, and the lab's address pool.
func DaemonConfig(runtime, runc string) ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"runtimes": map[string]any{
			RuntimeName: map[string]any{"path": runtime, "runtimeArgs": []string{RuncFlag + "=" + runc}},
		},
		"default-runtime":       RuntimeName,
		"default-address-pools": []map[string]any{{"base": AddressPool, "size": 24}},
		// The lab's dockerd pulls nothing it does not have to: every image is built or loaded.
		"features": map[string]any{"buildkit": false},
	}, "", "  ")
}

// Stop ends the lab's dockerd by its recorded PID (SIGTERM, SIGKILL after 60s), then
// removes its bridge and exec root. Its data root (the images the lab built)
// stays for the next lab.
func Stop(ctx context.Context, o Options) error {
	if err := o.procs().Stop(dockerdName, 60*time.Second); err != nil {
		return err
	}
	_ = os.Remove(o.pidFile())
	var errs []error
	if linkExists(o.Bridge()) {
		if out, err := exec.CommandContext(ctx, "ip", "link", "delete", o.Bridge()).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("ip link delete %s: %v: %s", o.Bridge(), err, strings.TrimSpace(string(out))))
		}
	}
	// A dockerd that died without its cleanup (SIGKILL, a machine stopped under it) leaves
	// its containers' network namespaces mounted in the exec root: detach them first.
	detachMountsUnder(o.execRoot())
	if err := os.RemoveAll(o.execRoot()); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// MountsUnder returns the mount points of mountinfo (the format of /proc/self/mountinfo)
// below dir, deepest first.
func MountsUnder(mountinfo, dir string) []string {
	var out []string
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		// The kernel escapes space, tab, newline and backslash as octal.
		p := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(f[4])
		if strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// Running tells whether the lab's dockerd runs, and its PID.
func Running(o Options) (int, bool) { return o.runningPID() }

func (o Options) runningPID() (int, bool) { return o.procs().Running(dockerdName) }

func linkExists(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}

// ensureBridge makes the lab's bridge with its address, up.
func (o Options) ensureBridge(ctx context.Context) error {
	br := o.Bridge()
	if !linkExists(br) {
		for _, args := range [][]string{
			{"link", "add", "name", br, "type", "bridge"},
			{"addr", "add", BridgeCIDR, "dev", br},
		} {
			if out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput(); err != nil {
				return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
			}
		}
	}
	if out, err := exec.CommandContext(ctx, "ip", "link", "set", br, "up").CombinedOutput(); err != nil {
		return fmt.Errorf("ip link set %s up: %v: %s", br, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func dockerOut(ctx context.Context, env []string, timeout time.Duration, args ...string) (string, error) {
	return dockerIn(ctx, env, timeout, nil, args...)
}

func dockerIn(ctx context.Context, env []string, timeout time.Duration, stdin io.Reader, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, dockerCommand(env), args...)
	cmd.Env = env
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if ctx.Err() != nil {
			msg = "no answer within " + timeout.String()
		}
		if msg == "" {
			msg = err.Error()
		}
		return stdout.String(), fmt.Errorf("docker %s: %s", args[0], msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}

// dockerCommand is the docker command on the PATH of env, which may differ
// from this process's.
func dockerCommand(env []string) string {
	for _, dir := range filepath.SplitList(envValue(env, "PATH")) {
		p := filepath.Join(dir, "docker")
		if info, err := os.Stat(p); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return p
		}
	}
	return "docker"
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// withDockerHost is env with DOCKER_HOST set to host ("" removes it).
func withDockerHost(env []string, host string) []string {
	out := make([]string, 0, len(env)+1)
	for _, e := range env {
		if !strings.HasPrefix(e, "DOCKER_HOST=") {
			out = append(out, e)
		}
	}
	if host != "" {
		out = append(out, "DOCKER_HOST="+host)
	}
	return out
}

func hostName(h string) string {
	if h == "" {
		return "docker's default address"
	}
	return h
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
