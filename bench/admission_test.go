package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if got := percentile(v, 50); got != 5 {
		t.Errorf("p50 = %v, want 5", got)
	}
	if got := percentile(v, 90); got != 9 {
		t.Errorf("p90 = %v, want 9", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("p50 of nothing = %v", got)
	}
}

func TestWebhookLine(t *testing.T) {
	line := `apiserver_admission_webhook_admission_duration_seconds_sum{name="mutate.kyverno.svc-fail",operation="CREATE",rejected="false",type="admit"} 1.25`
	g := webhookLine.FindStringSubmatch(line)
	if g == nil || g[1] != "sum" || g[3] != "1.25" {
		t.Fatalf("%q: %q", line, g)
	}
	if webhookLine.MatchString(`apiserver_admission_webhook_admission_duration_seconds_bucket{le="0.005",name="x"} 3`) {
		t.Error("a bucket line matched")
	}
}

func TestTreeRSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	if rss := treeRSS(os.Getpid()); rss <= 0 {
		t.Fatalf("RSS of this test = %d KiB", rss)
	}
	// Children started from whichever threads the runtime picks are all found.
	var cmds []*exec.Cmd
	for i := 0; i < 8; i++ {
		cmd := exec.Command("sleep", "5")
		if err := cmd.Start(); err != nil {
			t.Skip(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		cmds = append(cmds, cmd)
	}
	found := descendants(os.Getpid())
	for _, c := range cmds {
		if !slices.Contains(found, c.Process.Pid) {
			t.Errorf("child %d not among the descendants %v", c.Process.Pid, found)
		}
	}
}

func TestAdmissionReport(t *testing.T) {
	runs := []AdmissionRun{
		{Round: 1, Mode: "webhook", Object: "marked", P50: 10, P90: 20, WebhookMs: 8},
		{Round: 2, Mode: "webhook", Object: "marked", P50: 12, P90: 22, WebhookMs: 9},
		{Round: 1, Mode: "kyverno", Object: "marked", P50: 30, P90: 40, WebhookMs: 27},
		{Round: 2, Mode: "kyverno", Object: "marked", P50: 36, P90: 44, WebhookMs: 29},
	}
	res := &AdmissionResult{Member: "member1", Medians: admissionMedians(runs), Memory: map[string]int64{"kyverno kyverno (its lab pod)": 150 * 1024}}
	if m := res.Medians["kyverno marked"]; m.P50 != 33 || m.WebhookMs != 28 {
		t.Errorf("medians %+v", m)
	}
	var b strings.Builder
	writeAdmissionReport(&b, res)
	for _, want := range []string{"| marked: round trip p50 (ms) | 11.0 | 33.0 | 3.00 |", "| kyverno kyverno (its lab pod) | 150 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
