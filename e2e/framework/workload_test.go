package framework

import (
	"slices"
	"testing"

	"github.com/karmada-failover/lab/lab"
)

// The kind lab's FailPods fails the readiness probe of the suite's workload: the
// Deployment must carry it, on the lab's workload image.
func TestNewDeploymentRunsTheLabsWorkload(t *testing.T) {
	d := NewDeployment("ns", "web", 2)
	c := d.Spec.Template.Spec.Containers
	if len(c) != 1 || c[0].Image != lab.WorkloadImage {
		t.Fatalf("containers %+v: want one, of image %s", c, lab.WorkloadImage)
	}
	p := c[0].ReadinessProbe
	if p == nil || p.Exec == nil || !slices.Equal(p.Exec.Command, lab.WorkloadProbe) {
		t.Fatalf("readiness probe %+v: want exec %v", p, lab.WorkloadProbe)
	}
}
