// Package proc starts the lab's long-running processes detached from the
// command that starts them, records each one's PID in a file, and stops them
// by that PID. A stop checks the PID still belongs to the same program before
// signalling it, so a recycled PID is never killed.
package proc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/karmada-failover/lab/lab/internal/logtail"
)

// Manager starts and stops processes whose PID files live in PIDDir and whose
// output goes to LogDir/<name>.log.
type Manager struct {
	PIDDir, LogDir string
}

// Spec is one process to start.
type Spec struct {
	Name string   // unique within the lab, e.g. "karmada-apiserver"
	Path string   // binary
	Args []string // flags
	Env  []string // extra environment, KEY=VALUE
	Dir  string   // working directory (optional)
}

// LogFile is where the output of process name goes.
func (m *Manager) LogFile(name string) string { return filepath.Join(m.LogDir, name+".log") }

func (m *Manager) pidFile(name string) string { return filepath.Join(m.PIDDir, name+".pid") }

// Start starts the process in its own session, so it outlives the caller and a
// Ctrl-C in the caller's terminal does not reach it.
func (m *Manager) Start(s Spec) (int, error) {
	if pid, ok := m.Running(s.Name); ok {
		return 0, fmt.Errorf("%s is already running (pid %d)", s.Name, pid)
	}
	if err := os.MkdirAll(m.PIDDir, 0o755); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(m.LogDir, 0o755); err != nil {
		return 0, err
	}
	logf, err := os.OpenFile(m.LogFile(s.Name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "=== %s start: %s %s\n", time.Now().UTC().Format(time.RFC3339), s.Path, strings.Join(s.Args, " "))
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", s.Name, err)
	}
	pid := cmd.Process.Pid
	// The process is not waited for: it is reparented to init when we exit.
	_ = cmd.Process.Release()
	if err := os.WriteFile(m.pidFile(s.Name), []byte(fmt.Sprintf("%d %s\n", pid, s.Path)), 0o644); err != nil {
		return pid, err
	}
	return pid, nil
}

// Running reports the PID of process name if its PID file names a live process
// that still runs the recorded binary.
func (m *Manager) Running(name string) (int, bool) {
	pid, path, err := m.readPID(name)
	if err != nil {
		return 0, false
	}
	return pid, alive(pid, path)
}

func (m *Manager) readPID(name string) (int, string, error) {
	b, err := os.ReadFile(m.pidFile(name))
	if err != nil {
		return 0, "", err
	}
	fields := strings.Fields(string(b))
	if len(fields) < 1 {
		return 0, "", fmt.Errorf("empty pid file %s", m.pidFile(name))
	}
	pid, err := strconv.Atoi(fields[0])
	if err != nil {
		return 0, "", err
	}
	path := ""
	if len(fields) > 1 {
		path = fields[1]
	}
	return pid, path, nil
}

// alive reports whether pid runs path (zombies count as dead).
func alive(pid int, path string) bool {
	info, ok := Inspect(pid)
	if !ok || info.Zombie {
		return false
	}
	if path == "" || info.Argv0 == "" {
		// Right after fork, while the kernel replaces the image, the command
		// line reads empty: the process exists and is not a zombie, so it is ours.
		return true
	}
	return info.Argv0 == path || filepath.Base(info.Argv0) == filepath.Base(path)
}

// Info is what the system reports of a process (Inspect).
type Info struct {
	Zombie bool   // exited, not reaped yet
	Argv0  string // first word of its command line ("" while it execs)
	Exe    string // path of its executable ("" when the system does not say)
}

// Alive reports whether pid is a live (not zombie) process whose executable's
// or argv[0]'s base name is one of names: a PID recorded by another program
// (kwokctl) is checked before it is signalled, so a recycled PID is never killed.
func Alive(pid int, names ...string) bool {
	info, ok := Inspect(pid)
	if !ok || info.Zombie {
		return false
	}
	for _, n := range names {
		for _, p := range []string{info.Exe, info.Argv0} {
			if p != "" && filepath.Base(strings.TrimSuffix(p, " (deleted)")) == n {
				return true
			}
		}
	}
	return false
}

// Names lists the processes that have a PID file.
func (m *Manager) Names() []string {
	entries, _ := os.ReadDir(m.PIDDir)
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".pid"); ok {
			names = append(names, n)
		}
	}
	return names
}

// Stop sends SIGTERM to process name, waits up to grace for it to exit, then
// sends SIGKILL. The PID file is removed. Stopping a process that is not
// running is not an error.
func (m *Manager) Stop(name string, grace time.Duration) error {
	pid, path, err := m.readPID(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer os.Remove(m.pidFile(name))
	if !alive(pid, path) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !alive(pid, path) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing %s (pid %d): %w", name, pid, err)
	}
	for i := 0; i < 50 && alive(pid, path); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// Kill sends SIGKILL to process name at once (a crash, for fault injection)
// and waits for it to be gone. The PID file is removed.
func (m *Manager) Kill(name string) error {
	pid, path, err := m.readPID(name)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s is not running", name)
	}
	if err != nil {
		return err
	}
	defer os.Remove(m.pidFile(name))
	if !alive(pid, path) {
		return fmt.Errorf("%s (pid %d) is not running", name, pid)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing %s (pid %d): %w", name, pid, err)
	}
	for i := 0; i < 50 && alive(pid, path); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	return nil
}

// Tail returns the last n lines of process name's log.
func (m *Manager) Tail(name string, n int) string { return logtail.File(m.LogFile(name), n) }

// Probe is an HTTP(S) readiness check.
type Probe struct {
	URL string
	// CAFile verifies the server; empty means the endpoint is only checked for an
	// answer over TLS without verification (health ports of local components).
	CAFile string
	// CertFile/KeyFile authenticate the client, when the endpoint needs it.
	CertFile, KeyFile string
	// StartTimeout bounds the wait for the first healthy answer (DefaultStartTimeout when zero).
	StartTimeout time.Duration
}

// DefaultStartTimeout is how long a component may take to answer its health probe after it
// was started. The slowest, kube-apiserver on a loaded 2-core machine, answers within about 30 s.
const DefaultStartTimeout = 2 * time.Minute

// WaitReady polls probe until it answers 200, the process exits, the probe's start timeout
// passes, or ctx ends. A process that exits fails at once, and a process that does not answer
// in time fails, both with the end of its log; the process is left running for the caller to
// stop or inspect.
func (m *Manager) WaitReady(ctx context.Context, name string, p Probe) error {
	client, err := p.client()
	if err != nil {
		return err
	}
	timeout := p.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	var last string
	var exited bool
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if _, ok := m.Running(name); !ok {
			exited = true
			return false, errors.New("exited")
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return true, nil
		}
		last = resp.Status
		return false, nil
	})
	switch {
	case err == nil:
		return nil
	case exited:
		return fmt.Errorf("%s exited; last lines of %s:\n%s", name, m.LogFile(name), m.Tail(name, 20))
	case ctx.Err() == nil && wait.Interrupted(err):
		return fmt.Errorf("%s not ready at %s within its start timeout of %s (%s); last lines of %s:\n%s",
			name, p.URL, timeout, last, m.LogFile(name), m.Tail(name, 20))
	default:
		return fmt.Errorf("%s not ready at %s (%s); last lines of %s:\n%s", name, p.URL, last, m.LogFile(name), m.Tail(name, 20))
	}
}

func (p Probe) client() (*http.Client, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if p.CAFile != "" {
		pem, err := os.ReadFile(p.CAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no certificate in %s", p.CAFile)
		}
		tlsCfg.RootCAs = pool
	} else {
		tlsCfg.InsecureSkipVerify = true //nolint:gosec // loopback health probe of a process we just started
	}
	if p.CertFile != "" {
		c, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile)
		if err != nil {
			return nil, err
		}
		tlsCfg.Certificates = []tls.Certificate{c}
	}
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg, Proxy: nil}}, nil
}

// PortFree reports whether nothing listens on host:port.
func PortFree(host string, port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// Check probes once and returns nil if the endpoint answers 200.
func (p Probe) Check(ctx context.Context) error {
	client, err := p.client()
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", p.URL, resp.Status)
	}
	return nil
}
