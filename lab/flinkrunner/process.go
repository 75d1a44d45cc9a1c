package flinkrunner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// process is one Flink JVM started by the runner.
type process struct {
	pid     int
	logPath string
	done    chan struct{} // closed when the process has exited and been reaped
	err     error         // exit error (cmd.Wait), valid once done is closed
}

// startProcess starts argv with stdout/stderr appended to logPath. The process
// gets its own process group (a Ctrl-C in the runner's terminal reaches only the
// runner, which then stops it) and SIGKILL when the runner dies (Pdeathsig), so
// a killed runner does not leave a job running: a runner that stops normally
// stops its processes with SIGTERM first, one that is killed (the lab's crash
// fault) takes them down with it as a crashing node does, without a final
// checkpoint or a clean shutdown.
func startProcess(argv, env []string, logPath string) (*process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logf, "=== %s flink-runner start: %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(logf, "=== start failed: %v\n", err)
		logf.Close()
		return nil, err
	}
	p := &process{pid: cmd.Process.Pid, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		fmt.Fprintf(logf, "=== %s flink-runner: process %d exited: %v\n", time.Now().UTC().Format(time.RFC3339), p.pid, exitText(p.err))
		logf.Close()
		close(p.done)
	}()
	return p, nil
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process (by PID), waits up to grace, then sends
// SIGKILL and waits for it to be reaped. It returns true when SIGKILL was needed.
func (p *process) stop(grace time.Duration) (killed bool) {
	if p.exited() {
		return false
	}
	if err := syscall.Kill(p.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false
	}
	select {
	case <-p.done:
		return false
	case <-time.After(grace):
	}
	_ = syscall.Kill(p.pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
	return true
}
