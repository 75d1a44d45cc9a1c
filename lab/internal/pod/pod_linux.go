package pod

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/karmada-failover/lab/lab/internal/link"
)

// initEnv carries the plan of the pod's init process (the same binary,
// started again inside the new namespaces).
const initEnv = "KARMADA_FAILOVER_LAB_POD_PLAN"

// plan is what the init process does inside the namespaces.
type plan struct {
	Dir            string   `json:"dir"`
	ServiceAccount string   `json:"serviceAccount,omitempty"`
	Expose         []int    `json:"expose,omitempty"`
	Reach          []int    `json:"reach,omitempty"`
	Command        []string `json:"command"`
}

// IsInit reports whether this process is a pod's init process; its main must
// then call Init and nothing else.
func IsInit() bool { return os.Getenv(initEnv) != "" }

// Run runs s.Command in a pod until it exits or ctx ends (then it gets SIGTERM
// and, after s.Grace, SIGKILL), and returns its exit error.
func Run(ctx context.Context, s Spec) error {
	if err := s.validate(); err != nil {
		return err
	}
	if s.Grace == 0 {
		s.Grace = 20 * time.Second
	}
	dir := s.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "lab-pod-")
		if err != nil {
			return err
		}
		dir = d
	} else {
		// What a pod killed before it could clean up left (its sockets, its token).
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	if len(dir) > maxDirLen {
		return fmt.Errorf("pod folder %s is %d bytes long: Unix socket paths leave %d", dir, len(dir), maxDirLen)
	}
	defer os.RemoveAll(dir)
	p := plan{Dir: dir, Command: s.Command}

	fwdCtx, stopForwarding := context.WithCancel(context.Background())
	defer stopForwarding()
	if s.Token != nil {
		sa := filepath.Join(dir, "serviceaccount")
		if err := os.Mkdir(sa, 0o700); err != nil {
			return err
		}
		v, err := newVolume(sa, s.Token)
		if err != nil {
			return err
		}
		next, err := v.refresh(ctx)
		if err != nil {
			return err
		}
		go v.renew(fwdCtx, next, time.Minute)
		p.ServiceAccount = sa
	}
	// Reach: the init process listens on the pod's port and dials this socket.
	for _, r := range s.Reach {
		ln, err := net.Listen("unix", reachSocket(dir, r.Pod))
		if err != nil {
			return err
		}
		go func() { _ = link.New(r.Host).Serve(fwdCtx, ln) }()
		p.Reach = append(p.Reach, r.Pod)
	}
	for _, e := range s.Expose {
		p.Expose = append(p.Expose, e.Pod)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), initEnv+"="+string(raw))
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// A PID namespace of its own: when the init process ends, the
		// kernel ends everything the command started, as in a pod.
		Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWPID,
		Pdeathsig:  syscall.SIGKILL,
	}
	if os.Geteuid() != 0 {
		// Root of a user namespace of its own, mapped to the caller.
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the pod (Linux network and mount namespaces; as root, or with unprivileged user namespaces allowed): %w", err)
	}
	// Expose: the host listens, and dials the socket the init process serves.
	for _, e := range s.Expose {
		ln, err := net.Listen("tcp", e.Host)
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return err
		}
		l := link.New(exposeSocket(dir, e.Pod))
		l.Network = "unix"
		go func() { _ = l.Serve(fwdCtx, ln) }()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		return err
	case <-time.After(s.Grace + 5*time.Second):
		_ = cmd.Process.Kill()
		return <-done
	}
}

// Init is the pod's init process: inside the new namespaces it brings the
// loopback up, mounts the ServiceAccount volume, forwards the pod's ports and
// runs the command, passing SIGTERM on. It exits with the command's status.
func Init() {
	var p plan
	if err := json.Unmarshal([]byte(os.Getenv(initEnv)), &p); err != nil {
		fatal(fmt.Errorf("%s: %w", initEnv, err))
	}
	if err := setUp(p); err != nil {
		fatal(err)
	}
	ctx := context.Background()
	for _, port := range p.Expose {
		ln, err := net.Listen("unix", exposeSocket(p.Dir, port))
		if err != nil {
			fatal(err)
		}
		go func() { _ = link.New(fmt.Sprintf("127.0.0.1:%d", port)).Serve(ctx, ln) }()
	}
	for _, port := range p.Reach {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			fatal(err)
		}
		l := link.New(reachSocket(p.Dir, port))
		l.Network = "unix"
		go func() { _ = l.Serve(ctx, ln) }()
	}
	cmd := exec.Command(p.Command[0], p.Command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	env := os.Environ()
	for i, kv := range env {
		if strings.HasPrefix(kv, initEnv+"=") {
			env = append(env[:i], env[i+1:]...)
			break
		}
	}
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	if err := cmd.Start(); err != nil {
		fatal(err)
	}
	go func() {
		for s := range signals {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			os.Exit(128 + int(ws.Signal()))
		}
		os.Exit(exit.ExitCode())
	default:
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "lab-pod init:", err)
	os.Exit(1)
}

// setUp makes the pod's mounts private, brings its loopback up and mounts
// the ServiceAccount volume.
func setUp(p plan) error {
	// Nothing mounted here may reach the host's mount namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making mounts private: %w", err)
	}
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("bringing up the pod's loopback: %w", err)
	}
	if p.ServiceAccount == "" {
		return nil
	}
	return mountServiceAccount(p.Dir, p.ServiceAccount)
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// mountServiceAccount binds sa at ServiceAccountPath. The host has no such
// folder and nothing here may create one there, so the deepest existing
// folder on the way (the real /run behind /var/run, usually) is covered with a
// tmpfs that holds bind mounts of everything it had when the pod started, and
// the new folders.
func mountServiceAccount(dir, sa string) error {
	base, rest, err := existingAncestor(ServiceAccountPath)
	if err != nil {
		return err
	}
	if rest != "" {
		saved := filepath.Join(dir, "covered")
		if err := os.Mkdir(saved, 0o700); err != nil {
			return err
		}
		if err := unix.Mount(base, saved, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("keeping %s: %w", base, err)
		}
		entries, err := os.ReadDir(saved)
		if err != nil {
			return err
		}
		// A handle on the kept view: it stays reachable when the pod's folder
		// itself lies under the folder the tmpfs covers (TMPDIR under /run).
		fd, err := unix.Open(saved, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("keeping %s: %w", base, err)
		}
		defer unix.Close(fd)
		kept := fmt.Sprintf("/proc/self/fd/%d", fd)
		if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=755"); err != nil {
			return fmt.Errorf("covering %s: %w", base, err)
		}
		for _, e := range entries {
			err := restore(filepath.Join(kept, e.Name()), filepath.Join(base, e.Name()), e)
			if errors.Is(err, os.ErrNotExist) {
				continue // gone from the host since it was listed
			}
			if err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(ServiceAccountPath, 0o755); err != nil {
		return err
	}
	if err := unix.Mount(sa, ServiceAccountPath, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("mounting the ServiceAccount volume: %w", err)
	}
	return nil
}

// restore puts entry from (a bind-mounted view of the covered folder) back at to.
func restore(from, to string, e os.DirEntry) error {
	switch {
	case e.Type()&os.ModeSymlink != 0:
		target, err := os.Readlink(from)
		if err != nil {
			return err
		}
		return os.Symlink(target, to)
	case e.IsDir():
		if err := os.Mkdir(to, 0o755); err != nil {
			return err
		}
	default:
		f, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		f.Close()
	}
	if err := unix.Mount(from, to, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("restoring %s: %w", to, err)
	}
	return nil
}

// existingAncestor resolves path's symbolic links as far as they exist and
// returns the deepest existing folder and the part below it that does not.
func existingAncestor(path string) (string, string, error) {
	dir, rest := filepath.Clean(path), ""
	for {
		if _, err := os.Stat(dir); err == nil {
			real, err := filepath.EvalSymlinks(dir)
			if err != nil {
				return "", "", err
			}
			return real, rest, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", fmt.Errorf("no folder of %s exists", path)
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}
