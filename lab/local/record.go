package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
)

// The hermetic lab's record (lab.Component): its control plane, then per member its
// cluster (kwokctl's processes), the link Karmada reaches it through, and what runs in it
// for Flink. Status, the preflight's port check, Down and the faults that stop and start a
// component (lab.ComponentFaults) go over it.

// kwokProcess is a process kwokctl runs in each member, with its ports.
type kwokProcess struct {
	name  string
	ports func(config.MemberPorts) []int
}

// kwokProcesses are the processes kwokctl runs per member.
var kwokProcesses = []kwokProcess{
	{"etcd", func(p config.MemberPorts) []int { return []int{p.Etcd, p.EtcdPeer} }},
	{"kube-apiserver", func(p config.MemberPorts) []int { return []int{p.APIServer} }},
	{"kube-controller-manager", func(p config.MemberPorts) []int { return []int{p.ControllerManager} }},
	{"kube-scheduler", func(p config.MemberPorts) []int { return []int{p.Scheduler} }},
	{"kwok-controller", func(p config.MemberPorts) []int { return []int{p.KwokController} }},
}

// The short names of what runs for a member besides kwokctl's processes.
const (
	linkComponent           = "lab-link"
	restoreWebhookComponent = "flink-restore-webhook"
	kyvernoComponent        = "kyverno"
)

// stopGrace is how long a component may take to stop before it is killed: the runner stops
// its Flink processes first, Kyverno's pod its containers.
var stopGrace = map[string]time.Duration{
	lab.RunnerComponent: 30 * time.Second, kyvernoComponent: 20 * time.Second, linkComponent: 5 * time.Second,
}

// components is the record of a lab of l's configuration with restore mode mode.
func (l *Lab) components(mode string) []lab.Component {
	var cs []lab.Component
	for _, c := range l.controlPlaneComponents(nil) {
		if c.name == "seaweedfs" && l.Cfg.Bins.SeaweedFS == "" {
			continue
		}
		rc := lab.Component{Name: c.name, Kind: lab.KindProcess, Binary: c.binary, Args: c.args, Ports: c.ports,
			Address: c.address, Probe: c.probe.URL, StartTimeout: lab.Timeout(c.probe.StartTimeout)}
		if c.name == "seaweedfs" {
			rc.Name, rc.Process = lab.CheckpointStoreComponent, c.name
		}
		cs = append(cs, rc)
	}
	p := l.Cfg.Ports
	for _, m := range l.Cfg.MemberList() {
		name, mp := m.Name(), p.Member(m)
		cs = append(cs, lab.Component{Name: name, Kind: lab.KindCluster, Member: name, Binary: l.Cfg.Bins.Kwokctl,
			Args: []string{"start", "cluster", "--name", name}, Address: "https://" + hostPort(mp.APIServer),
			StartTimeout: lab.Timeout(memberStartTimeout)})
		for _, k := range kwokProcesses {
			ports := k.ports(mp)
			cs = append(cs, lab.Component{Name: lab.MemberComponent(name, k.name), Kind: lab.KindProcess, Member: name, Parent: name,
				Ports: ports, Address: hostPort(ports[0])})
		}
		// The link stands for the network between Karmada and the member: it is not in the
		// member and does not die with it.
		cs = append(cs, lab.Component{Name: lab.MemberComponent(name, linkComponent), Kind: lab.KindProcess, Process: linkName(name),
			Binary: l.Cfg.Bins.Link, Args: linkArgs(mp), Ports: []int{mp.Link, mp.LinkControl}, Address: hostPort(mp.Link),
			Probe: "http://" + hostPort(mp.LinkControl) + "/healthz"})
		if !l.FlinkEnabled() {
			continue
		}
		webhook := hostPort(p.RestoreWebhookFor(m))
		args, _ := l.restoreWebhookArgs(name)
		cs = append(cs, lab.Component{Name: lab.MemberComponent(name, restoreWebhookComponent), Kind: lab.KindProcess, Member: name,
			Process: restoreWebhookName(name), Binary: l.restoreWebhookBinary(), Args: args, Ports: []int{p.RestoreWebhookFor(m)},
			Address: webhook, Probe: "https://" + webhook + "/healthz"})
		if mode == config.RestoreKyverno {
			probe, _ := l.kyvernoProbe(name)
			cs = append(cs, lab.Component{Name: lab.MemberComponent(name, kyvernoComponent), Kind: lab.KindProcess, Member: name,
				Process: kyvernoName(name), Binary: l.Cfg.Bins.Pod, Args: l.kyvernoPodArgs(m), Ports: []int{p.KyvernoFor(m)},
				Address: hostPort(p.KyvernoFor(m)), Probe: probe.URL, StartTimeout: lab.Timeout(probe.StartTimeout)})
		}
		health := hostPort(p.FlinkRunnerHealth(m))
		cs = append(cs, lab.Component{Name: lab.MemberComponent(name, lab.RunnerComponent), Kind: lab.KindProcess, Member: name,
			Process: runnerName(name), Binary: l.Cfg.Bins.FlinkRunner, Args: l.runnerArgs(m, -1),
			Ports: []int{p.FlinkRunnerHealth(m)}, Address: health, Probe: "http://" + health + "/healthz"})
	}
	return cs
}

// memberStartTimeout is how long a member's API server may take to answer after a start.
const memberStartTimeout = 90 * time.Second

// recorded is the running lab's record, or the one a lab of l's configuration would have.
func (l *Lab) recorded() []lab.Component {
	if st, err := l.State(); err == nil && len(st.Components) > 0 {
		return st.Components
	}
	return l.components(l.restoreMode())
}

// recordComponents writes the components of restore mode mode into the running lab's record.
func (l *Lab) recordComponents(mode string) error {
	st, err := l.State()
	if err != nil {
		return err
	}
	st.Components = l.components(mode)
	return l.writeState(st)
}

// processName is the name of c's PID file and log.
func processName(c lab.Component) string {
	if c.Process != "" {
		return c.Process
	}
	return c.Name
}

// shortName splits member/name; a control-plane component has no member.
func shortName(c lab.Component) (member, short string) {
	if m, s, ok := strings.Cut(c.Name, "/"); ok {
		return m, s
	}
	return "", c.Name
}

// find is the component name of the record, and the record; a component its member's
// cluster starts and stops (kwokctl's processes) is refused.
func (l *Lab) find(name string) (lab.Component, []lab.Component, error) {
	cs := l.recorded()
	c, err := lab.Find(cs, name)
	if err == nil && c.Parent != "" {
		err = fmt.Errorf("%s is stopped and started with its member: the component %s", name, c.Parent)
	}
	return c, cs, err
}

// graceOf is how long the component of short name may take to stop before it is killed.
func graceOf(short string) time.Duration {
	if grace, ok := stopGrace[short]; ok {
		return grace
	}
	return 10 * time.Second
}

// StopComponent stops the component name of the record (lab.Components): a member's cluster
// after what it owns, the runner first (it stops its Flink processes); kill is a crash.
func (l *Lab) StopComponent(ctx context.Context, name string, kill bool) error {
	c, cs, err := l.find(name)
	switch {
	case err != nil:
		return err
	case c.Kind == lab.KindCluster:
		return l.stopMember(ctx, cs, name, kill)
	case kill:
		return l.Proc.Kill(processName(c))
	}
	_, short := shortName(c)
	return l.Proc.Stop(processName(c), graceOf(short))
}

// StartComponent starts the component name of the record (lab.Components) when it is not
// running, and waits until it answers: a member's cluster, then what it owns and ran before.
func (l *Lab) StartComponent(ctx context.Context, name string, o lab.StartOptions) error {
	c, cs, err := l.find(name)
	switch {
	case err != nil:
		return err
	case c.Kind == lab.KindCluster:
		return l.startMember(ctx, cs, name)
	}
	return l.startProcess(ctx, c, o)
}

// startProcess starts the process of component c unless it runs.
func (l *Lab) startProcess(ctx context.Context, c lab.Component, o lab.StartOptions) error {
	if _, running := l.Proc.Running(processName(c)); running {
		return nil
	}
	member, short := shortName(c)
	switch {
	case member == "":
		return l.startComponent(ctx, processName(c), o.Gates)
	case short == linkComponent:
		return l.startLink(ctx, member)
	case short == restoreWebhookComponent:
		return l.startRestoreWebhook(ctx, member)
	case short == kyvernoComponent:
		if err := l.startKyverno(ctx, member); err != nil {
			return err
		}
		return l.waitKyvernoAdmission(ctx, member)
	case short == lab.RunnerComponent:
		return l.startRunner(ctx, member, -1)
	}
	return fmt.Errorf("the hermetic lab does not start %s on its own", c.Name)
}

// stopMember stops a member and what runs in it, in reverse record order. By default the
// member crashes, as a node losing power does: SIGKILL to its runner (whose Flink JVMs the
// kernel kills with it: no final checkpoint, no clean shutdown), its restore webhook, its
// Kyverno and kwokctl's processes, at once. Without kill every process gets SIGTERM and
// time to shut down. Its data is kept: startMember brings the same cluster back.
func (l *Lab) stopMember(ctx context.Context, cs []lab.Component, name string, kill bool) error {
	if _, err := os.Stat(l.memberDir(name)); err != nil {
		return fmt.Errorf("no member %q in this lab (%s)", name, l.Cfg.KwokDir())
	}
	pids := l.memberPIDs(name)
	var errs []error
	owned := lab.Owned(cs, name)
	for i := len(owned) - 1; i >= 0; i-- {
		if _, running := l.Proc.Running(processName(owned[i])); running {
			errs = append(errs, l.StopComponent(ctx, owned[i].Name, kill))
		}
	}
	if !kill {
		if err := errors.Join(errs...); err != nil {
			return err
		}
		if _, err := l.kwokctl(ctx, "stop", "cluster", "--name", name); err != nil {
			return err
		}
		if killed := ensureMemberStopped(pids, 15*time.Second); len(killed) > 0 {
			fmt.Fprintf(os.Stderr, "killed %s of %s after it ignored SIGTERM\n", strings.Join(killed, ", "), name)
		}
		return l.forgetStoppedPIDs(name)
	}
	for _, pid := range pids {
		if processAlive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if left := ensureMemberStopped(pids, 10*time.Second); len(left) > 0 {
		errs = append(errs, fmt.Errorf("%s of %s survived SIGKILL", strings.Join(left, ", "), name))
	}
	errs = append(errs, l.forgetStoppedPIDs(name))
	if m, ok := config.AnyMember(name); ok {
		lo, hi := l.Cfg.Ports.FlinkRESTRange(m)
		errs = append(errs, waitPortsClosed(lo, hi, 15*time.Second))
	}
	return errors.Join(errs...)
}

// forgetStoppedPIDs removes the PID files of member name's processes that are gone. A
// process killed a moment ago can still be a zombie waiting for its reaper, which
// kwokctl counts as running (signal 0 reaches it): `kwokctl start cluster` would then
// start nothing and wait for an API server that never comes.
func (l *Lab) forgetStoppedPIDs(name string) error {
	var errs []error
	for component, pid := range l.memberPIDs(name) {
		if !processAlive(pid) {
			f := filepath.Join(l.memberDir(name), "pids", component+".pid")
			if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// startMember starts a stopped member, waits for its API server and its nodes, then
// starts, in record order, what it owns and ran before it stopped.
func (l *Lab) startMember(ctx context.Context, cs []lab.Component, name string) error {
	if _, err := os.Stat(l.memberDir(name)); err != nil {
		return fmt.Errorf("no member %q in this lab (%s)", name, l.Cfg.KwokDir())
	}
	if _, err := l.kwokctl(ctx, "start", "cluster", "--name", name); err != nil {
		return err
	}
	started := time.Now()
	if err := l.waitMemberAPI(ctx, name, memberStartTimeout); err != nil {
		return err
	}
	if err := l.waitNodesManaged(ctx, name, started); err != nil {
		return err
	}
	for _, c := range lab.Owned(cs, name) {
		if _, err := os.Stat(l.Proc.LogFile(processName(c))); err != nil {
			continue // never ran: not part of the member yet
		}
		if err := l.startProcess(ctx, c, lab.StartOptions{}); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	return nil
}
