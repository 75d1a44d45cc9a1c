package lab

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/proc"
)

// ComponentKind is how a component runs.
type ComponentKind string

// The kinds of component.
const (
	// KindProcess is a process on this host (the hermetic lab), found by its PID file.
	KindProcess ComponentKind = "process"
	// KindCluster is a member or host cluster (kwokctl's processes, or a kind node container).
	KindCluster ComponentKind = "cluster"
	// KindDeployment is a Deployment in one of the lab's clusters (the kind lab).
	KindDeployment ComponentKind = "deployment"
	// KindStatefulSet is a StatefulSet in one of the lab's clusters (the kind lab: etcd).
	KindStatefulSet ComponentKind = "statefulset"
)

// The names of the components every lab has, as faults and scenarios name them.
const (
	ControllerManagerComponent = "karmada-controller-manager"
	SchedulerComponent         = "karmada-scheduler"
	CheckpointStoreComponent   = "checkpoint-store"
	// RunnerComponent is a member's FlinkDeployment runner: <member>/flink-runner.
	RunnerComponent = "flink-runner"
)

// MemberComponent is the name of member's component of short name c (member1/flink-runner).
func MemberComponent(member, c string) string { return member + "/" + c }

// Component is one part of a running lab as its record (lab.json) lists it: what runs,
// where it answers, how it is probed and how long it may take to start. Up starts them in
// the record's order, Down stops them in reverse, Status probes each, the preflight checks
// that their ports are free, and the faults that stop and start a part of the lab
// (ComponentFaults) name one.
type Component struct {
	// Name is how faults, status and logs name it: karmada-controller-manager,
	// checkpoint-store, member1 (the member's cluster), member1/flink-runner.
	Name string        `json:"name"`
	Kind ComponentKind `json:"kind"`
	// Member owns it: it runs in that member and dies with it ("": it does not).
	Member string `json:"member,omitempty"`
	// Process is the name of its PID file and log (a process of the hermetic lab), or of
	// its Kubernetes object (the kind lab), when not Name.
	Process string `json:"process,omitempty"`
	// Parent starts and stops it (kwokctl's processes of a member): not on its own.
	Parent string `json:"parent,omitempty"`
	// Cluster and Namespace are where a Deployment runs (the kind lab).
	Cluster   string `json:"cluster,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Binary or Image is what runs, with Args.
	Binary string   `json:"binary,omitempty"`
	Image  string   `json:"image,omitempty"`
	Args   []string `json:"args,omitempty"`
	// Ports are the ports of this host it listens on (checked free before Up).
	Ports []int `json:"ports,omitempty"`
	// Address is where it answers, as `lab status` shows it.
	Address string `json:"address,omitempty"`
	// Probe is the URL that answers when it is healthy ("": none, it runs or not).
	Probe string `json:"probe,omitempty"`
	// StartTimeout is how long it may take to answer its probe after a start.
	StartTimeout *metav1.Duration `json:"startTimeout,omitempty"`
}

// StartOptions are the options of StartComponent.
type StartOptions struct {
	// Gates override the lab's feature gates of karmada-controller-manager (nil: the
	// lab's own).
	Gates map[string]bool
}

// Components stops and starts one component of the running lab's record, by name:
// what a fault of ComponentFaults does, and what scenarios do to the controller.
type Components interface {
	// StopComponent stops the component, and first every component its member owns
	// when it is a member's cluster; kill makes it a crash (SIGKILL, no grace).
	StopComponent(ctx context.Context, name string, kill bool) error
	// StartComponent starts a stopped component (a member's cluster with what it owns)
	// and waits until it is healthy, karmada-controller-manager with o.Gates. Stop it
	// first to change its gates: the hermetic lab leaves a running process as it is.
	StartComponent(ctx context.Context, name string, o StartOptions) error
}

// Find returns the component named name of a record.
func Find(components []Component, name string) (Component, error) {
	for _, c := range components {
		if c.Name == name {
			return c, nil
		}
	}
	var names []string
	for _, c := range components {
		names = append(names, c.Name)
	}
	return Component{}, fmt.Errorf("no component %q in this lab (it has %s)", name, strings.Join(names, ", "))
}

// Owned returns the components member owns besides its cluster and what its cluster
// starts and stops itself, in record order.
func Owned(components []Component, member string) []Component {
	var out []Component
	for _, c := range components {
		if c.Member == member && c.Name != member && c.Parent == "" {
			out = append(out, c)
		}
	}
	return out
}

// BusyPorts checks that every port of components is free on the lab's host address, and
// names each busy one with its component.
func BusyPorts(components []Component) error {
	var busy []string
	for _, c := range components {
		for _, port := range c.Ports {
			if !proc.PortFree(config.Host, port) {
				busy = append(busy, fmt.Sprintf("%d (%s)", port, c.Name))
			}
		}
	}
	if len(busy) == 0 {
		return nil
	}
	sort.Strings(busy)
	return fmt.Errorf("ports in use on %s: %s", config.Host, strings.Join(busy, ", "))
}

// DuplicatePorts returns the ports that more than one component of components declares.
func DuplicatePorts(components []Component) map[int][]string {
	users := map[int][]string{}
	for _, c := range components {
		for _, port := range c.Ports {
			users[port] = append(users[port], c.Name)
		}
	}
	for port, u := range users {
		if len(u) < 2 {
			delete(users, port)
		}
	}
	return users
}

// ComponentFault is a fault that stops a component of the lab and starts it again: one
// row of ComponentFaults. Inject stops, Heal starts.
type ComponentFault struct {
	Fault Fault
	// Component is the component's name; in a member's fault, "{member}" stands for the
	// member's name.
	Component string
	// Kill makes the stop a crash: SIGKILL, no grace, no clean shutdown.
	Kill bool
	// Doc says what a user sees.
	Doc string
}

// memberPlaceholder stands for the member in the component of a member's fault.
const memberPlaceholder = "{member}"

// ComponentFaults are the faults that stop a component and start it again, one row each:
// both labs carry them out by StopComponent and StartComponent over their record.
var ComponentFaults = []ComponentFault{
	{Fault: FaultStopCluster, Component: memberPlaceholder, Kill: true,
		Doc: "a member crashes: everything in it gets SIGKILL, its API server becomes unreachable"},
	{Fault: FaultStopCheckpointStore, Component: CheckpointStoreComponent,
		Doc: "the S3 checkpoint store stops: connections to it are refused; started again on its data"},
	{Fault: FaultKillController, Component: ControllerManagerComponent, Kill: true,
		Doc: "karmada-controller-manager crashes (SIGKILL), wherever it is in a reconcile"},
	{Fault: "kill-scheduler", Component: SchedulerComponent, Kill: true,
		Doc: "karmada-scheduler crashes (SIGKILL): nothing is scheduled until it is back"},
	{Fault: FaultRestartRunner, Component: MemberComponent(memberPlaceholder, RunnerComponent),
		Doc: "a member's FlinkDeployment runner (the operator stand-in) stops with its jobs and starts again: it recovers each job under its id"},
}

// ComponentFaultOf returns fault's row of ComponentFaults.
func ComponentFaultOf(fault Fault) (ComponentFault, bool) {
	for _, f := range ComponentFaults {
		if f.Fault == fault {
			return f, true
		}
	}
	return ComponentFault{}, false
}

// ForMember reports whether the fault is injected into a member (its component names one).
func (f ComponentFault) ForMember() bool { return strings.Contains(f.Component, memberPlaceholder) }

// Target is the name of the component the fault stops in member.
func (f ComponentFault) Target(member string) (string, error) {
	if f.ForMember() != (member != "") {
		if member == "" {
			return "", fmt.Errorf("%s: name the member", f.Fault)
		}
		return "", fmt.Errorf("%s is not a fault of a member (%s)", f.Fault, f.Component)
	}
	return strings.ReplaceAll(f.Component, memberPlaceholder, member), nil
}

// Inject stops the component of fault (a row of ComponentFaults) in member ("" for a fault
// of the lab's control plane or store).
func Inject(ctx context.Context, p Provider, fault Fault, member string) error {
	f, name, err := componentFault(p, fault, member)
	if err != nil {
		return err
	}
	return p.StopComponent(ctx, name, f.Kill)
}

// Heal starts again the component Inject stopped, and waits until it is healthy.
func Heal(ctx context.Context, p Provider, fault Fault, member string, o StartOptions) error {
	_, name, err := componentFault(p, fault, member)
	if err != nil {
		return err
	}
	return p.StartComponent(ctx, name, o)
}

func componentFault(p Provider, fault Fault, member string) (ComponentFault, string, error) {
	f, ok := ComponentFaultOf(fault)
	if !ok {
		return f, "", fmt.Errorf("%s is not a fault that stops a component (%s)", fault, strings.Join(componentFaultNames(), ", "))
	}
	if err := Supports(p, fault); err != nil {
		return f, "", err
	}
	name, err := f.Target(member)
	return f, name, err
}

func componentFaultNames() []string {
	var names []string
	for _, f := range ComponentFaults {
		names = append(names, string(f.Fault))
	}
	return names
}

// Timeout is d as a record's start timeout (nil: none).
func Timeout(d time.Duration) *metav1.Duration {
	if d <= 0 {
		return nil
	}
	return &metav1.Duration{Duration: d}
}
