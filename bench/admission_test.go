package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/karmada-failover/lab/e2e/framework"
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

// metricsText is /metrics as a Kubernetes API server serves it (excerpt).
const metricsText = `# HELP apiserver_admission_webhook_admission_duration_seconds [STABLE] Admission webhook latency in seconds
# TYPE apiserver_admission_webhook_admission_duration_seconds histogram
apiserver_admission_webhook_admission_duration_seconds_bucket{name="mutate.kyverno.svc-fail",operation="CREATE",rejected="false",type="admit",le="0.005"} 1
apiserver_admission_webhook_admission_duration_seconds_bucket{name="mutate.kyverno.svc-fail",operation="CREATE",rejected="false",type="admit",le="+Inf"} 4
apiserver_admission_webhook_admission_duration_seconds_sum{name="mutate.kyverno.svc-fail",operation="CREATE",rejected="false",type="admit"} 1.25
apiserver_admission_webhook_admission_duration_seconds_count{name="mutate.kyverno.svc-fail",operation="CREATE",rejected="false",type="admit"} 4
apiserver_admission_webhook_admission_duration_seconds_bucket{name="flink-restore.lab",operation="UPDATE",rejected="false",type="admit",le="+Inf"} 7
apiserver_admission_webhook_admission_duration_seconds_sum{name="flink-restore.lab",operation="UPDATE",rejected="false",type="admit"} 9
apiserver_admission_webhook_admission_duration_seconds_count{name="flink-restore.lab",operation="UPDATE",rejected="false",type="admit"} 7
apiserver_admission_webhook_admission_duration_seconds_bucket{name="validate.kyverno.svc",operation="CREATE",rejected="false",type="validating",le="+Inf"} 2
apiserver_admission_webhook_admission_duration_seconds_sum{name="validate.kyverno.svc",operation="CREATE",rejected="false",type="validating"} 5
apiserver_admission_webhook_admission_duration_seconds_count{name="validate.kyverno.svc",operation="CREATE",rejected="false",type="validating"} 2
apiserver_admission_webhook_admission_duration_seconds_bucket{name="flink-restore.lab",operation="CREATE",rejected="true",type="admit",le="+Inf"} 1
apiserver_admission_webhook_admission_duration_seconds_sum{name="flink-restore.lab",operation="CREATE",rejected="true",type="admit"} 0.5
apiserver_admission_webhook_admission_duration_seconds_count{name="flink-restore.lab",operation="CREATE",rejected="true",type="admit"} 1
# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="work.karmada.io",resource="resourcebindings",scope="namespace",subresource="status",verb="PATCH",version="v1alpha2"} 12
apiserver_request_total{code="409",component="apiserver",dry_run="",group="work.karmada.io",resource="resourcebindings",scope="namespace",subresource="status",verb="PATCH",version="v1alpha2"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="work.karmada.io",resource="resourcebindings",scope="namespace",subresource="",verb="UPDATE",version="v1alpha2"} 5
apiserver_request_total{code="0",component="apiserver",dry_run="",group="work.karmada.io",resource="works",scope="namespace",subresource="",verb="WATCH",version="v1alpha1"} 40
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="events",scope="namespace",subresource="",verb="POST",version="v1"} 2.5e+01
`

func TestMetricsOfTheAPIServer(t *testing.T) {
	families, err := framework.ParseMetrics([]byte(metricsText))
	if err != nil {
		t.Fatal(err)
	}
	// Mutating (type admit) CREATE calls only, rejected or not: the Kyverno
	// webhook's 4 and the restore webhook's rejected 1.
	if sum, count := webhookAdmissionOf(families); sum != 1.75 || count != 5 {
		t.Errorf("webhook admission: sum %v count %v, want 1.75 and 5", sum, count)
	}
	want := map[string]float64{
		"PATCH resourcebindings/status": 15,
		"UPDATE resourcebindings":       5,
		"POST events":                   25,
	}
	got := apiRequestsOf(families)
	if len(got) != len(want) {
		t.Errorf("requests %v, want %v (watches left out)", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("requests[%q] = %v, want %v", k, got[k], v)
		}
	}
	if _, err := framework.ParseMetrics([]byte("apiserver_request_total{verb=\"GET\" 1\n")); err == nil {
		t.Error("a malformed line parsed")
	}
	if sum, count := webhookAdmissionOf(map[string]*dto.MetricFamily{}); sum != 0 || count != 0 {
		t.Errorf("no webhook metrics: %v %v", sum, count)
	}
}

func TestTreeRSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	if rss := treeRSS(os.Getpid()); rss <= 0 {
		t.Fatalf("RSS of this test = %d KiB", rss)
	}
	if peak := peakRSS(os.Getpid()); peak < treeRSS(os.Getpid())/2 || peak <= 0 {
		t.Errorf("peak RSS of this test = %d KiB", peak)
	}
	if cpu := cpuSecondsOf(os.Getpid()); cpu <= 0 {
		t.Errorf("CPU time of this test = %v s", cpu)
	}
	if cpuSecondsOf(-1) != 0 || peakRSS(-1) != 0 || treeRSS(-1) != 0 {
		t.Error("a process that does not exist counts as zero")
	}
	if m := machine(); !strings.Contains(m, " cores, ") || strings.Contains(m, "unknown") {
		t.Errorf("machine() = %q", m)
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
