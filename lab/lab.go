// Package lab defines what a failover lab is, whatever runs it: the Provider interface that
// the hermetic lab (lab/local, processes on 127.0.0.1) and the kind lab (lab/kind, Docker)
// implement, the faults a scenario injects, the running lab's record (lab.json, State) and
// the helpers that work the same on both (TaintCluster, Flap). lab/providers chooses the
// provider once; lab/cmd/lab, e2e and bench use only this package's types.
package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/karmada-failover/lab/lab/config"
)

// ErrAlreadyUp is returned by Up when the lab is up and healthy already.
var ErrAlreadyUp = errors.New("the lab is already up")

// ErrUnsupported is wrapped by Supports, and by a method of a fault or a capability the
// provider does not have (Info).
var ErrUnsupported = errors.New("not supported by this lab")

// UpOptions are the options of Up.
type UpOptions struct {
	// Out receives the step lines.
	Out io.Writer
	// Retain keeps a partly brought-up lab for inspection instead of taking it down (LAB_RETAIN=1).
	Retain bool
}

// Provider is one kind of lab.
type Provider interface {
	// Name is the provider (LAB_PROVIDER).
	Name() config.Provider
	// Config is the configuration the provider was made with.
	Config() *config.Config
	// Plan checks that the lab can come up (ErrAlreadyUp when it is up) and returns how:
	// the record and the steps Up runs. Bring a lab up with Up, not with the plan alone.
	Plan(ctx context.Context, out io.Writer) (*Plan, error)
	// TearDown stops everything of the lab (processes, clusters, the lab's own dockerd);
	// its data and logs stay. Take a lab down with Down, which also marks its record.
	TearDown(ctx context.Context, out io.Writer) error
	// Status checks every component.
	Status(ctx context.Context) ([]ComponentStatus, error)
	// Env is the exports that point kubectl, karmadactl and upstream's e2e suite at the lab.
	Env() []string
	// State reads the running lab's record; the error wraps os.ErrNotExist when there is none.
	State() (*State, error)
	// CollectLogs copies the logs of the lab's components into dst (e2e artifacts of a
	// failed spec).
	CollectLogs(ctx context.Context, dst string) error
	// Info is what the lab can do: callers read it, never the provider's type.
	Info() Info
	// Running reports whether anything of the lab runs (its processes, its clusters'
	// node containers), whatever its record says.
	Running() bool
	Faults
	Components
	CheckpointStore
	RestoreModes
	Builds
}

// Info is what a lab can do, in one place (as kind's ProviderInfo). A method of a
// capability the lab lacks returns an error wrapping ErrUnsupported.
type Info struct {
	// Unsupported names each fault the lab cannot inject, and why.
	Unsupported map[Fault]string
	// Builds tells that the lab runs either Karmada build in place with its processes
	// on this host (SwitchKarmada, ProcessPID): make bench compares the two on one lab.
	Builds bool
	// FlinkRunner tells that the members run the lab's FlinkDeployment runner (the
	// operator stand-in; its record says so): the Flink specs need it.
	FlinkRunner bool
}

// Supports returns nil when p can inject fault, or an error wrapping ErrUnsupported that
// says why not.
func Supports(p Provider, fault Fault) error {
	if why, ok := p.Info().Unsupported[fault]; ok {
		return Unsupported(p.Name(), fault, why)
	}
	return nil
}

// Fault names a fault a scenario injects into a member.
type Fault string

// The faults.
const (
	// FaultStopCluster crashes a member (ComponentFaults).
	FaultStopCluster Fault = "stop-cluster"
	// FaultPartition cuts Karmada off a member that keeps running (Partition).
	FaultPartition Fault = "partition"
	// FaultFailPods makes a workload's pods unready in one member (FailPods).
	FaultFailPods Fault = "fail-pods"
	// FaultStarveFlink takes the task slots of a member's Flink jobs away (StarveFlink).
	FaultStarveFlink Fault = "starve-flink"
	// FaultStopCheckpointStore makes the lab's S3 checkpoint store unreachable
	// (ComponentFaults).
	FaultStopCheckpointStore Fault = "stop-checkpoint-store"
	// FaultKillController crashes karmada-controller-manager (ComponentFaults).
	FaultKillController Fault = "kill-controller"
	// FaultRestartRunner stops a member's FlinkDeployment runner and starts it again
	// (ComponentFaults).
	FaultRestartRunner Fault = "restart-runner"
)

// Faults are how a member is made to fail and recover, besides stopping and starting one
// of the lab's components (ComponentFaults); Supports tells which a lab has.
type Faults interface {
	// Partition cuts Karmada off a member that keeps running (heal: reconnects it).
	Partition(ctx context.Context, name string, heal bool) error
	// FailPods makes the pods matching selector in namespace of a member unready (they keep
	// running), or ready again with heal, and returns how many it changed.
	FailPods(ctx context.Context, cluster, namespace, selector string, heal bool) (int, error)
	// StarveFlink takes the task slots of a member's Flink jobs away (their TaskManagers are
	// lost: jobs stay CREATED), or gives them back.
	StarveFlink(ctx context.Context, cluster string, starve bool) error
}

// CheckpointStore is the lab's S3 checkpoint store, as this host reaches it: the e2e suite
// reads the Flink jobs' checkpoints there, as the restore does.
type CheckpointStore interface {
	// S3Credentials are the store's endpoint (as this host reaches it), region and keys.
	S3Credentials() (*S3Credentials, error)
}

// Builds is running either Karmada build (patched or upstream, the same source) in place,
// with the lab's processes on this host: make bench compares the two on one lab. Only the
// hermetic lab can (Info.Builds).
type Builds interface {
	// SwitchKarmada restarts Karmada's controllers from the flavour's build.
	SwitchKarmada(ctx context.Context, flavour config.Flavour) error
	// ProcessPID is the PID of the lab's process name (karmada-controller-manager, ...).
	ProcessPID(name string) (int, bool)
}

// RestoreModes is how the members restore a failed-over FlinkDeployment, changed while
// the lab runs (config.RestoreWebhook or config.RestoreKyverno): the e2e suite runs its
// Kyverno variants on the lab it is given.
type RestoreModes interface {
	// Restore is the members' current restore mode.
	Restore() string
	// SetRestore switches every member to mode and records it; it returns when the new
	// path is ready to admit FlinkDeployments and the old one is gone.
	SetRestore(ctx context.Context, mode string) error
}

// Unsupported returns the error of a provider that cannot inject fault, and why.
func Unsupported(p config.Provider, fault Fault, why string) error {
	return fmt.Errorf("%s on the %s lab: %w: %s", fault, p, ErrUnsupported, why)
}

// Flap partitions and heals member name in turn every period for duration, and leaves it
// reconnected.
func Flap(ctx context.Context, f Faults, name string, period, duration time.Duration) error {
	if period <= 0 || duration <= 0 {
		return errors.New("flap: period and duration must be > 0")
	}
	var err error
	partitioned := false
	for end := time.Now().Add(duration); err == nil && time.Now().Before(end); {
		if err = f.Partition(ctx, name, partitioned); err != nil {
			break
		}
		partitioned = !partitioned
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-time.After(period):
		}
	}
	if partitioned || err != nil {
		err = errors.Join(err, f.Partition(context.WithoutCancel(ctx), name, true))
	}
	return err
}

// Env returns the exports that point kubectl, karmadactl and upstream's e2e suite at a lab,
// as upstream's local-up prints them, with the folders of bins first on PATH.
func Env(cfg *config.Config, bins ...string) []string {
	var dirs []string
	for _, b := range bins {
		if b != "" {
			dirs = append(dirs, filepath.Dir(b))
		}
	}
	return []string{
		"export KUBECONFIG=" + cfg.KarmadaKubeconfig(),
		"export KARMADA_CONFIG=" + cfg.KarmadaKubeconfig(),
		"export MEMBERS_CONFIG=" + cfg.MembersKubeconfig(),
		"export KARMADA_CONTEXT=" + config.KarmadaContext,
		"export PATH=" + strings.Join(dirs, ":") + ":$PATH",
	}
}
