package flinkrunner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/karmada-failover/lab/lab/internal/logtail"
	"github.com/karmada-failover/lab/lab/internal/proc"
)

// Process is the Flink JobManager of one FlinkDeployment, where the operator
// would run a JobManager pod: a local JVM (the hermetic lab, LocalExecutor) or
// a pod of its own in the member (the kind lab, PodExecutor). Either runs the
// same command line (Launch.Argv): lab/flink's per-job MiniCluster.
type Process interface {
	// Done is closed once the process has ended (exited, or its pod failed or is gone).
	Done() <-chan struct{}
	Exited() bool
	// ExitText says how it ended ("" while it runs).
	ExitText() string
	// Stop ends it: SIGTERM (a pod's deletion), SIGKILL after grace; it returns
	// once the process is gone. killed tells that SIGKILL was needed, where known.
	Stop(grace time.Duration) (killed bool)
	// RESTBase is the base URL of its Flink REST API ("" while not known yet).
	RESTBase() string
	// PID is a local process's id (0 for a pod).
	PID() int
	// Where names it for logs and events: its log file, or "pod <namespace>/<name>".
	Where() string
	// LogTail is the last n lines of its output.
	LogTail(n int) string
}

// Executor starts the Flink processes of a Runner.
type Executor interface {
	// Port reserves the REST port of a new process; Release gives it back.
	Port() (int, error)
	Release(port int)
	// Bind is the address the process's REST API binds and advertises.
	Bind(d *Deployment) (bind, advertise string)
	// Start starts l for d; the runner has stopped d's previous process before.
	Start(ctx context.Context, d *Deployment, l *Launch, port int) (Process, error)
	// Name is "local" or "pod", for the log.
	Name() string
}

// LocalExecutor runs each job as a JVM on this host, bound to 127.0.0.1, with
// its output appended to <LogDir>/<namespace>_<name>.log; the JVMs die with
// the runner (proc.Attached).
type LocalExecutor struct {
	Ports  *PortAllocator
	LogDir string
	Env    []string
}

// NewLocalExecutor is a LocalExecutor with REST ports from lo..hi.
func NewLocalExecutor(lo, hi int, logDir string, env []string) (*LocalExecutor, error) {
	if lo == 0 && hi == 0 {
		lo, hi = 24700, 24799
	}
	if logDir == "" {
		logDir = "."
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	return &LocalExecutor{Ports: NewPortAllocator(lo, hi), LogDir: logDir, Env: env}, nil
}

func (e *LocalExecutor) Name() string                      { return "local" }
func (e *LocalExecutor) Port() (int, error)                { return e.Ports.Allocate() }
func (e *LocalExecutor) Release(port int)                  { e.Ports.Release(port) }
func (e *LocalExecutor) Bind(*Deployment) (string, string) { return "127.0.0.1", "127.0.0.1" }

func (e *LocalExecutor) Start(_ context.Context, d *Deployment, l *Launch, port int) (Process, error) {
	logPath, _ := filepath.Abs(filepath.Join(e.LogDir, d.Namespace+"_"+d.Name+".log"))
	tmp, err := e.tmpDir(d)
	if err != nil {
		return nil, err
	}
	argv := append([]string{l.Argv[0], "-Djava.io.tmpdir=" + tmp}, l.Argv[1:]...)
	p, err := proc.StartAttached(argv, e.Env, logPath)
	if err != nil {
		return nil, fmt.Errorf("starting flink process: %w", err)
	}
	return &localProcess{p: p, base: "http://127.0.0.1:" + strconv.Itoa(port)}, nil
}

// tmpDir is the JVM's java.io.tmpdir, <LogDir>/tmp/<namespace>_<name>, emptied
// before every start. Flink unpacks its RPC system's jar (about 20 MB) there and
// removes it only on a clean exit: in /tmp, every job the lab kills would leave one.
func (e *LocalExecutor) tmpDir(d *Deployment) (string, error) {
	dir, err := filepath.Abs(filepath.Join(e.LogDir, "tmp", d.Namespace+"_"+d.Name))
	if err != nil {
		return "", err
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("emptying the flink process's temporary directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating the flink process's temporary directory: %w", err)
	}
	return dir, nil
}

type localProcess struct {
	p    *proc.Attached
	base string
}

func (p *localProcess) Done() <-chan struct{}         { return p.p.Done() }
func (p *localProcess) Exited() bool                  { return p.p.Exited() }
func (p *localProcess) ExitText() string              { return p.p.ExitText() }
func (p *localProcess) Stop(grace time.Duration) bool { return p.p.Stop(grace) }
func (p *localProcess) RESTBase() string              { return p.base }
func (p *localProcess) PID() int                      { return p.p.PID }
func (p *localProcess) Where() string                 { return p.p.LogPath }
func (p *localProcess) LogTail(n int) string          { return logtail.File(p.p.LogPath, n) }
