package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Attached is a process that lives and dies with the process that started it, unlike the
// detached processes of Manager: the Flink JVMs of a FlinkDeployment runner. It gets its own
// process group (a Ctrl-C in the starter's terminal reaches only the starter, which then
// stops it) and SIGKILL when the starter dies (Pdeathsig), so a starter that is killed takes
// its processes down with it, as a crashing node does: no final checkpoint, no clean shutdown.
// Pdeathsig is Linux's; elsewhere (macOS) a watchdog shell polls the starter every second and
// kills the process group when the starter is gone (startWatchdog).
type Attached struct {
	PID     int
	LogPath string
	done    chan struct{} // closed when the process has exited and been reaped
	err     error         // exit error (cmd.Wait), valid once done is closed
}

// StartAttached starts argv, with env added to the environment and its output appended to
// logPath, marked by a start and an exit line.
func StartAttached(argv, env []string, logPath string) (*Attached, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logf, "=== %s start: %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = attachedSysProcAttr()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(logf, "=== start failed: %v\n", err)
		logf.Close()
		return nil, err
	}
	if !pdeathsig {
		if err := startWatchdog(os.Getpid(), cmd.Process.Pid); err != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			fmt.Fprintf(logf, "=== watchdog failed: %v\n", err)
			logf.Close()
			return nil, fmt.Errorf("starting the watchdog of %s: %w", argv[0], err)
		}
	}
	p := &Attached{PID: cmd.Process.Pid, LogPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		fmt.Fprintf(logf, "=== %s process %d exited: %s\n", time.Now().UTC().Format(time.RFC3339), p.PID, exitText(p.err))
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

// Done is closed once the process has exited and been reaped.
func (p *Attached) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended.
func (p *Attached) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitText describes how the process ended ("running" while it runs).
func (p *Attached) ExitText() string {
	if !p.Exited() {
		return "running"
	}
	return exitText(p.err)
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// Stop sends SIGTERM to the process, waits up to grace, then sends SIGKILL and waits for it
// to be reaped. It returns true when SIGKILL was needed.
func (p *Attached) Stop(grace time.Duration) (killed bool) {
	if p.Exited() {
		return false
	}
	if err := syscall.Kill(p.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false
	}
	select {
	case <-p.done:
		return false
	case <-time.After(grace):
	}
	_ = syscall.Kill(p.PID, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
	return true
}

// startWatchdog starts a shell, in a session of its own, that polls every
// second whether starter and the process group child both live, and kills the
// group with SIGKILL when the starter is gone first: Pdeathsig where the system
// has none. It exits by itself when child does.
func startWatchdog(starter, child int) error {
	script := fmt.Sprintf(`while kill -0 %[1]d 2>/dev/null && kill -0 %[2]d 2>/dev/null; do sleep 1; done
kill -0 %[2]d 2>/dev/null && kill -KILL -%[2]d`, starter, child)
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reaped while the starter lives; init's after
	return nil
}
