package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func newManager(t *testing.T) *Manager {
	d := t.TempDir()
	return &Manager{PIDDir: filepath.Join(d, "pids"), LogDir: filepath.Join(d, "logs")}
}

func sleepBin(t *testing.T) string {
	p, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	return p
}

func TestStartRunningStop(t *testing.T) {
	m := newManager(t)
	pid, err := m.Start(Spec{Name: "sleeper", Path: sleepBin(t), Args: []string{"30"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		got, ok := m.Running("sleeper")
		if !ok || got != pid {
			t.Fatalf("check %d: Running = %d, %t; want %d, true", i, got, ok, pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := m.Start(Spec{Name: "sleeper", Path: sleepBin(t), Args: []string{"30"}}); err == nil {
		t.Fatal("a second Start of a running process succeeded")
	}
	if err := m.Stop("sleeper", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Running("sleeper"); ok {
		t.Fatal("still running after Stop")
	}
	if _, err := os.Stat(m.pidFile("sleeper")); !os.IsNotExist(err) {
		t.Fatalf("pid file left behind: %v", err)
	}
	if err := m.Stop("sleeper", time.Second); err != nil {
		t.Fatalf("stopping a stopped process: %v", err)
	}
}

func TestStopKillsAProcessIgnoringSIGTERM(t *testing.T) {
	m := newManager(t)
	if _, err := m.Start(Spec{Name: "stubborn", Path: "/bin/sh", Args: []string{"-c", "trap '' TERM; sleep 30 & wait"}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := m.Stop("stubborn", 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Running("stubborn"); ok {
		t.Fatal("a process ignoring SIGTERM survived Stop")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Stop took %s", d)
	}
}

func TestRecycledPIDIsNotOurs(t *testing.T) {
	m := newManager(t)
	if err := os.MkdirAll(m.PIDDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Our own PID, recorded for another binary: must not count as running (nor be killed).
	if err := os.WriteFile(m.pidFile("other"), []byte(strings.Join([]string{itoa(os.Getpid()), "/nonexistent/etcd"}, " ")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Running("other"); ok {
		t.Fatal("a PID running another binary counts as running")
	}
	if err := m.Stop("other", time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestWaitReadyFailsFastWhenTheProcessExits(t *testing.T) {
	m := newManager(t)
	if _, err := m.Start(Spec{Name: "crasher", Path: "/bin/sh", Args: []string{"-c", "echo boom-from-the-process; exit 3"}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	err := m.WaitReady(ctx, "crasher", Probe{URL: "http://127.0.0.1:1/healthz"})
	if err == nil || !strings.Contains(err.Error(), "boom-from-the-process") {
		t.Fatalf("WaitReady = %v; want an error with the log tail", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("WaitReady did not fail fast")
	}
}

// A component that runs but never answers its probe fails after its start timeout instead of
// holding `lab up` until the user interrupts it.
func TestWaitReadyFailsWhenTheProcessNeverAnswers(t *testing.T) {
	m := newManager(t)
	if _, err := m.Start(Spec{Name: "silent", Path: sleepBin(t), Args: []string{"60"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Kill("silent") })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err := m.WaitReady(ctx, "silent", Probe{URL: "http://127.0.0.1:1/healthz", StartTimeout: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "start timeout of 2s") || !strings.Contains(err.Error(), "start: "+sleepBin(t)+" 60") {
		t.Fatalf("WaitReady = %v; want a start timeout error with the log tail", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("WaitReady took %s; want it to give up after the 2s start timeout", took)
	}
	if _, ok := m.Running("silent"); !ok {
		t.Error("the process was stopped; the caller decides")
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// An attached process is stopped with SIGTERM, and with SIGKILL when it ignores it.
func TestAttachedStop(t *testing.T) {
	dir := t.TempDir()
	p, err := StartAttached([]string{"/bin/sh", "-c", "echo attached-started; trap '' TERM; while :; do sleep 1; done"}, nil, filepath.Join(dir, "a.log"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if p.Exited() || p.ExitText() != "running" {
		t.Fatalf("exited at once: %s", p.ExitText())
	}
	if killed := p.Stop(300 * time.Millisecond); !killed || !p.Exited() {
		t.Fatalf("a process ignoring SIGTERM: killed %t, exited %t", killed, p.Exited())
	}
	b, _ := os.ReadFile(filepath.Join(dir, "a.log"))
	if !strings.Contains(string(b), "attached-started") || !strings.Contains(string(b), "exited: signal: killed") {
		t.Errorf("log %q", b)
	}
	q, err := StartAttached([]string{"/bin/sh", "-c", "exit 3"}, nil, filepath.Join(dir, "b.log"))
	if err != nil {
		t.Fatal(err)
	}
	<-q.Done()
	if q.ExitText() != "exit status 3" || q.Stop(time.Second) {
		t.Errorf("an exited process: %s", q.ExitText())
	}
}

// The watchdog that stands in for Pdeathsig where there is none kills the
// attached process group once its starter is gone.
func TestWatchdogKillsTheGroupWhenTheStarterDies(t *testing.T) {
	starter := exec.Command(sleepBin(t), "30")
	if err := starter.Start(); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(sleepBin(t), "30")
	child.SysProcAttr = attachedSysProcAttrForTest()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	if err := startWatchdog(starter.Process.Pid, child.Process.Pid); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Fatal("the child died while its starter lives")
	case <-time.After(1500 * time.Millisecond):
	}
	_ = starter.Process.Kill()
	_ = starter.Wait()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "killed") {
			t.Errorf("child ended with %v, want killed", err)
		}
	case <-time.After(5 * time.Second):
		_ = child.Process.Kill()
		t.Fatal("the child outlived its starter by 5 s")
	}
}

func TestAliveByName(t *testing.T) {
	p := exec.Command(sleepBin(t), "30")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Process.Kill(); _ = p.Wait() }()
	if !Alive(p.Process.Pid, "kube-apiserver", "sleep") {
		t.Error("a live sleep is not Alive as sleep")
	}
	if Alive(p.Process.Pid, "kube-apiserver", "etcd") {
		t.Error("a recycled PID (sleep) taken for a member component")
	}
	_ = p.Process.Kill()
	_ = p.Wait()
	if Alive(p.Process.Pid, "sleep") {
		t.Error("a reaped process is Alive")
	}
}
