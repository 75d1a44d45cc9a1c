package framework

import (
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

// TestClusterRoomOf: the replicas Karmada sees room for, as its general estimator
// reckons them from a Cluster's resource summary; the scarcest resource decides.
func TestClusterRoomOf(t *testing.T) {
	summary := func(cpuAlloc, cpuUsed, cpuPending, memAlloc, memUsed string) *clusterv1alpha1.Cluster {
		rl := func(cpu, mem string) corev1.ResourceList {
			l := corev1.ResourceList{}
			if cpu != "" {
				l[corev1.ResourceCPU] = resource.MustParse(cpu)
			}
			if mem != "" {
				l[corev1.ResourceMemory] = resource.MustParse(mem)
			}
			return l
		}
		return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m"}, Status: clusterv1alpha1.ClusterStatus{
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: rl(cpuAlloc, memAlloc), Allocated: rl(cpuUsed, memUsed), Allocating: rl(cpuPending, "")}}}
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
	} {
		got, err := ClusterRoomOf(tc.c, WorkloadRequests)
		if err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want %d", name, got, err, tc.want)
		}
	}
	if _, err := ClusterRoomOf(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "new"}}, WorkloadRequests); err == nil {
		t.Error("a cluster without a resource summary: no error")
	}
}
