package framework

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/karmada-io/karmada/pkg/apis/cluster/v1alpha1"
)

func TestSuiteConfigLoadsAndFallsBackToDefaults(t *testing.T) {
	c, err := LoadConfig(filepath.Join("..", "config", "e2e.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Timeout("no-such-spec", "wait-failover"); got != 3*time.Minute {
		t.Fatalf("default/wait-failover timeout = %s", got)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("intervals:\n  default/x: [\"soon\", \"1s\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(bad); err == nil || !strings.Contains(err.Error(), "default/x") {
		t.Fatalf("a bad duration is not reported: %v", err)
	}
}

func TestTimelineOrdersMarksAndWritesAReport(t *testing.T) {
	tl := NewTimeline("Failover by taint")
	t0 := time.Now()
	tl.MarkAt("scheduled to member2", t0.Add(3*time.Second))
	tl.MarkAt("failure injected on member1", t0)
	tl.MarkAt("failure injected on member1", t0.Add(time.Hour)) // the first mark of a label wins
	marks := tl.Marks()
	if len(marks) != 2 || marks[0].Label != "failure injected on member1" {
		t.Fatalf("marks %v", marks)
	}
	if s := tl.Since("failure injected on member1", "scheduled to member2"); s != 3 {
		t.Fatalf("Since = %v", s)
	}
	if s := tl.Since("failure injected on member1", "never"); s != -1 {
		t.Fatalf("Since of a missing mark = %v", s)
	}
	dir := t.TempDir()
	if err := tl.Write(dir, "taint.svg"); err != nil {
		t.Fatal(err)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "taint.svg"))
	report, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(svg), "scheduled to member2 (3.0s)") || !strings.Contains(string(report), "(taint.svg)") {
		t.Fatalf("svg or report lacks the marks:\n%s\n%s", svg, report)
	}
}

// TestClusterRoomOf: the replicas Karmada's scheduler sees room for in a
// Cluster, from its resource summary, or from the grades of its resource models
// where the Cluster has them (Karmada's default: CustomizedClusterResourceModeling).
func TestClusterRoomOf(t *testing.T) {
	rl := func(cpu, mem, pods string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem, corev1.ResourcePods: pods} {
			if v != "" {
				l[name] = resource.MustParse(v)
			}
		}
		return l
	}
	summary := func(cpuAlloc, cpuUsed, cpuPending, memAlloc, memUsed string) *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Status: clusterv1alpha1.ClusterStatus{
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: rl(cpuAlloc, memAlloc, "110"), Allocated: rl(cpuUsed, memUsed, "10"),
				Allocating: rl(cpuPending, "", "")}}}
	}
	// Karmada's first two default grades; the node is counted in grade 0 or 1 by
	// what it has left.
	modelled := func(grade uint) *clusterv1alpha1.Cluster {
		c := summary("2", "950m", "", "24Gi", "368Mi")
		c.Spec.ResourceModels = []clusterv1alpha1.ResourceModel{
			{Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{
				{Name: corev1.ResourceCPU, Min: resource.MustParse("0"), Max: resource.MustParse("1")},
				{Name: corev1.ResourceMemory, Min: resource.MustParse("0"), Max: resource.MustParse("4Gi")}}},
			{Grade: 1, Ranges: []clusterv1alpha1.ResourceModelRange{
				{Name: corev1.ResourceCPU, Min: resource.MustParse("1"), Max: resource.MustParse("2")},
				{Name: corev1.ResourceMemory, Min: resource.MustParse("4Gi"), Max: resource.MustParse("16Gi")}}},
		}
		c.Status.ResourceSummary.AllocatableModelings = []clusterv1alpha1.AllocatableModeling{{Grade: grade, Count: 1}}
		return c
	}
	for name, tc := range map[string]struct {
		c    *clusterv1alpha1.Cluster
		want int64
	}{
		"a kind member with its system pods":         {summary("2", "950m", "", "24Gi", "368Mi"), 10},
		"a Flink job pod still terminating there":    {summary("2", "1950m", "", "24Gi", "1Gi"), 0},
		"pods being scheduled count":                 {summary("2", "950m", "500m", "24Gi", "368Mi"), 5},
		"memory is the scarcer":                      {summary("8", "0", "", "256Mi", "0"), 4},
		"more allocated than allocatable is no room": {summary("1", "2", "", "1Gi", "0"), 0},
		// What placed a divided workload on one member of the kind lab: the
		// summary has room, the node's grade has none.
		"a node in grade 0 (less than 1 CPU left)": {modelled(0), 0},
		"a node in grade 1 (1 CPU or more left)":   {modelled(1), 10},
	} {
		got, err := ClusterRoomOf(context.Background(), tc.c, WorkloadRequests)
		if err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want %d", name, got, err, tc.want)
		}
	}
	if _, err := ClusterRoomOf(context.Background(), &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, WorkloadRequests); err == nil {
		t.Error("a cluster without a resource summary: no error")
	}
}

// TestDividesOver: when a divided workload lands on two clusters, by the rooms
// Karmada's scheduler weighs them by.
func TestDividesOver(t *testing.T) {
	for name, tc := range map[string]struct {
		room map[string]int64
		ok   bool
	}{
		"three kind members alike":                 {map[string]int64{"member1": 10, "member2": 10, "member3": 10}, true},
		"uneven, the smaller still gets one":       {map[string]int64{"member1": 10, "member2": 4}, true},
		"one without room for all replicas":        {map[string]int64{"member1": 10, "member2": 3}, false},
		"room for all, yet one would get them all": {map[string]int64{"member1": 110, "member2": 10}, false},
		"a cluster with no room":                   {map[string]int64{"member1": 10, "member2": 0}, false},
		"hermetic members alike":                   {map[string]int64{"member1": 110, "member2": 110, "member3": 110}, true},
	} {
		if err := DividesOver(tc.room, 4); (err == nil) != tc.ok {
			t.Errorf("%s: %v; want ok=%t", name, err, tc.ok)
		}
	}
}
