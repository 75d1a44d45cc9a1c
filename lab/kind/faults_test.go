package kind

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/karmada-failover/lab/lab"
)

// karmadactl init puts karmada-controller-manager's flags in the command; the
// kind lab's StartController must replace --feature-gates there, not add a second one.
func TestSetArgReplacesTheFlagWhereItIs(t *testing.T) {
	c := corev1.Container{Command: []string{"/bin/karmada-controller-manager", "--feature-gates=Failover=true,FailoverHistory=true", "--v=4"}}
	setArg(&c, "--feature-gates=Failover=true,FailoverHistory=false")
	if !slices.Equal(c.Command, []string{"/bin/karmada-controller-manager", "--feature-gates=Failover=true,FailoverHistory=false", "--v=4"}) || len(c.Args) != 0 {
		t.Errorf("command %v, args %v", c.Command, c.Args)
	}
	setArg(&c, "--leader-elect=false")
	if !slices.Equal(c.Args, []string{"--leader-elect=false"}) {
		t.Errorf("a new flag goes to args: %v", c.Args)
	}
}

func TestPartitionScript(t *testing.T) {
	cut := PartitionScript("10.214.0.2", false)
	for _, want := range []string{"-s 10.214.0.2 -p tcp --dport 6443 -j DROP", "-d 10.214.0.2 -p tcp --sport 6443 -j DROP",
		"iptables -N " + PartitionChain, "iptables -I $c -j " + PartitionChain} {
		if !strings.Contains(cut, want) {
			t.Errorf("partition script lacks %q:\n%s", want, cut)
		}
	}
	if strings.Contains(cut, "-s 10.214.0.2 -j DROP") {
		t.Error("the partition cuts the member's workloads off the host cluster's node (the checkpoint store) too")
	}
	heal := PartitionScript("10.214.0.2", true)
	if strings.Contains(heal, "DROP") || !strings.Contains(heal, "iptables -X "+PartitionChain) {
		t.Errorf("heal script:\n%s", heal)
	}
	// Partitioning twice leaves one set of rules: the script unhooks first.
	if !strings.HasPrefix(cut, heal) {
		t.Error("the partition script does not first remove an earlier partition")
	}
}

// FailPods acts only on pods whose container has the e2e workload's readiness probe:
// on any other pod the lab has no way to make it unready.
func TestWorkloadContainer(t *testing.T) {
	probe := func(cmd ...string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: cmd}}}
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "sidecar"},
		{Name: "other-probe", ReadinessProbe: probe("cat", "/ready")},
		{Name: "app", Image: lab.WorkloadImage, ReadinessProbe: probe(lab.WorkloadProbe...)},
	}}}
	if c, ok := workloadContainer(pod); !ok || c != "app" {
		t.Fatalf("workloadContainer = %q, %v; want the container with the workload's probe", c, ok)
	}
	pod.Spec.Containers = pod.Spec.Containers[:2]
	if c, ok := workloadContainer(pod); ok {
		t.Fatalf("a pod without the workload's probe was accepted (container %q)", c)
	}
}
