package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/karmada-failover/lab/apis/flink"
	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/karmada-failover/lab/e2e/framework"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/restore/webhook"
)

// The cost of each restore path in a member's API server, measured in one run
// on the running hermetic lab (go run ./bench admission): the restore webhook
// (/mutate) against Kyverno running the ClusterPolicy that asks the webhook's
// /locate. Each sample is a server-side dry-run CREATE of a FlinkDeployment
// in the member, as Karmada's identity there: the API server runs its
// mutating admission (the dry run persists nothing, so no runner deploys it).
//   - marked: Karmada's failover marker with a carried job id whose checkpoint
//     directory is empty, past the missing grace: the path lists the store and
//     admits it without state (decision no-checkpoint-found);
//   - unmarked: a FlinkDeployment Karmada did not fail over.
// Measured at places the restore path does not control: the client's round
// trip, the API server's own histogram of webhook admission time
// (apiserver_admission_webhook_admission_duration_seconds), and the resident
// memory of the processes (/proc). Modes alternate A B B A ... by round; the
// creates are paced at admissionRate per second.

// AdmissionResult is the result file of go run ./bench admission.
type AdmissionResult struct {
	Command string         `json:"command"`
	Machine string         `json:"machine"`
	Started time.Time      `json:"started"`
	Member  string         `json:"member"`
	N       int            `json:"n"`
	Rounds  int            `json:"rounds"`
	Runs    []AdmissionRun `json:"runs"`
	// Medians over the rounds, keyed "<mode> <object>".
	Medians map[string]AdmissionRun `json:"medians"`
	// Memory is the resident memory (VmRSS, KiB) of each restore path's
	// processes after its runs, keyed "<mode> <process>".
	Memory map[string]int64 `json:"memoryKiB"`
}

// AdmissionRun is n creates of one object on one path.
type AdmissionRun struct {
	Round  int    `json:"round,omitempty"`
	Mode   string `json:"mode"`
	Object string `json:"object"`
	// Client round trip of the dry-run create, milliseconds.
	P50, P90, Mean float64
	// WebhookMs is the API server's mean time in mutating webhooks per
	// create (its histogram's sum over the creates), WebhookCalls the calls
	// per create it counted.
	WebhookMs    float64 `json:"webhookMs"`
	WebhookCalls float64 `json:"webhookCalls"`
}

// admissionOptions are the flags of `bench admission`.
type admissionOptions struct {
	N, Rounds   int
	Member, Out string
}

func admission(w io.Writer, o admissionOptions, command string) error {
	n, rounds, member, out := &o.N, &o.Rounds, &o.Member, &o.Out
	ctx := context.Background()
	_, p, st, fl, err := openLab()
	if err != nil {
		return err
	}
	if !p.Info().Builds {
		return fmt.Errorf("the admission benchmark switches a running lab between its restore paths and reads its processes: the hermetic lab; the %s lab cannot", p.Name())
	}
	if !p.Info().FlinkRunner {
		return fmt.Errorf("the lab runs no Flink: nothing restores FlinkDeployments there")
	}
	m := fl.Member(*member)
	if m == nil {
		return fmt.Errorf("no member %q in this lab (%v)", *member, st.Members)
	}
	const ns = "bench-admission"
	if _, err := m.Kube().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	rc := m.RESTConfig()
	rc.Impersonate.UserName = "system:serviceaccount:karmada-cluster:karmada-" + *member
	rc.QPS, rc.Burst = 1000, 1000
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	fds := dyn.Resource(flink.GVR).Namespace(ns)
	objects := map[string]*unstructured.Unstructured{"marked": admissionObject(ns, true), "unmarked": admissionObject(ns, false)}

	before := p.Restore()
	defer func() {
		// Also after a failed switch: SetRestore finishes or undoes it.
		if err := p.SetRestore(context.Background(), before); err != nil {
			fmt.Fprintf(w, "putting the lab back to %s: %v\n", before, err)
		}
	}()
	res := &AdmissionResult{Command: command, Machine: machine(), Started: time.Now().UTC(),
		Member: *member, N: *n, Rounds: *rounds, Memory: map[string]int64{}}
	order := []string{config.RestoreWebhook, config.RestoreKyverno}
	for round := 1; round <= *rounds; round++ {
		for _, mode := range order {
			fmt.Fprintf(w, "round %d/%d: %s\n", round, *rounds, mode)
			if err := p.SetRestore(ctx, mode); err != nil {
				return err
			}
			for _, object := range []string{"marked", "unmarked"} {
				run, err := admissionRun(ctx, m, fds, objects[object], mode, object, *n)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", mode, object, err)
				}
				run.Round = round
				res.Runs = append(res.Runs, run)
				fmt.Fprintf(w, "  %-8s p50 %.1f ms, p90 %.1f ms, in webhooks %.1f ms (%.2f calls)\n", object, run.P50, run.P90, run.WebhookMs, run.WebhookCalls)
			}
			processes := map[string]string{"flink-restore-webhook": "flink-restore-webhook-" + *member}
			if mode == config.RestoreKyverno {
				processes["kyverno (its lab pod)"] = "kyverno-" + *member
			}
			for label, name := range processes {
				if pid, ok := p.ProcessPID(name); ok {
					res.Memory[mode+" "+label] = treeRSS(pid)
				}
			}
		}
		slices.Reverse(order)
	}
	res.Medians = admissionMedians(res.Runs)
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		return err
	}
	writeAdmissionReport(w, res)
	fmt.Fprintf(w, "result: %s\n", *out)
	return nil
}

// admissionObject is the FlinkDeployment the benchmark creates: marked as
// Karmada marks a failed-over one (an hour ago: past the missing grace), or not.
func admissionObject(ns string, marked bool) *unstructured.Unstructured {
	fd := framework.NewFlinkDeployment(ns, "probe", "s3://flink-checkpoints/"+ns+"/probe")
	if marked {
		fd.SetLabels(map[string]string{workv1alpha2.FailoverReasonLabel: "ClusterFailure", "flink.lab.karmada.io/job-id": "0123456789abcdef0123456789abcdef"})
		fd.SetAnnotations(map[string]string{
			workv1alpha2.FailoverTimeAnnotation:          time.Now().Add(-time.Hour).UTC().Format(time.RFC3339),
			workv1alpha2.FailoverPreservedKeysAnnotation: "flink.lab.karmada.io/job-id",
		})
	}
	return fd
}

// admissionRun makes n dry-run creates after 10 unmeasured ones, and checks
// that the path under test decided each marked one.
func admissionRun(ctx context.Context, m *framework.ClusterProxy, fds dynamic.ResourceInterface, obj *unstructured.Unstructured, mode, object string, n int) (AdmissionRun, error) {
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	check := func(got *unstructured.Unstructured) error {
		if object != "marked" {
			return nil
		}
		a := got.GetAnnotations()
		if a[webhook.AnnotationDecision] != webhook.DecisionNoCheckpoint {
			return fmt.Errorf("decision %q, want %q: the restore path did not decide", a[webhook.AnnotationDecision], webhook.DecisionNoCheckpoint)
		}
		if (a["restore.lab.karmada.io/mutated-by"] != "") != (mode == config.RestoreKyverno) {
			return fmt.Errorf("mutated-by %q on the %s path", a["restore.lab.karmada.io/mutated-by"], mode)
		}
		return nil
	}
	// create admits obj once and returns the round trip in milliseconds.
	create := func() (float64, error) {
		start := time.Now()
		got, err := fds.Create(ctx, obj, dryRun)
		ms := float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			return 0, err
		}
		return ms, check(got)
	}
	for i := 0; i < 10; i++ {
		if _, err := create(); err != nil {
			return AdmissionRun{}, err
		}
	}
	sum0, count0, err := webhookAdmission(ctx, m)
	if err != nil {
		return AdmissionRun{}, err
	}
	lat := make([]float64, 0, n)
	// Paced below the restore webhook's per-caller rate limit (20/s, burst
	// 50): a latency, not a queue behind the limiter.
	tick := time.NewTicker(time.Second / admissionRate)
	defer tick.Stop()
	for i := 0; i < n; i++ {
		<-tick.C
		ms, err := create()
		if err != nil {
			return AdmissionRun{}, err
		}
		lat = append(lat, ms)
	}
	sum1, count1, err := webhookAdmission(ctx, m)
	if err != nil {
		return AdmissionRun{}, err
	}
	slices.Sort(lat)
	var total float64
	for _, v := range lat {
		total += v
	}
	return AdmissionRun{Mode: mode, Object: object, P50: percentile(lat, 50), P90: percentile(lat, 90), Mean: total / float64(n),
		WebhookMs: (sum1 - sum0) * 1000 / float64(n), WebhookCalls: (count1 - count0) / float64(n)}, nil
}

// admissionRate is the creates per second of a measured run.
const admissionRate = 10

// percentile of sorted values (nearest rank).
func percentile(sorted []float64, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// webhookAdmission sums the API server's time in mutating webhooks on CREATE
// (seconds) and the number of those calls.
func webhookAdmission(ctx context.Context, m *framework.ClusterProxy) (sum, count float64, err error) {
	families, err := framework.ScrapeMetrics(ctx, m)
	if err != nil {
		return 0, 0, err
	}
	sum, count = webhookAdmissionOf(families)
	return sum, count, nil
}

func admissionMedians(runs []AdmissionRun) map[string]AdmissionRun {
	groups := map[string][]AdmissionRun{}
	for _, r := range runs {
		groups[r.Mode+" "+r.Object] = append(groups[r.Mode+" "+r.Object], r)
	}
	out := map[string]AdmissionRun{}
	for k, rs := range groups {
		med := func(f func(AdmissionRun) float64) float64 {
			v := make([]float64, len(rs))
			for i, r := range rs {
				v[i] = f(r)
			}
			return summary(v).Median
		}
		out[k] = AdmissionRun{Mode: rs[0].Mode, Object: rs[0].Object,
			P50: med(func(r AdmissionRun) float64 { return r.P50 }), P90: med(func(r AdmissionRun) float64 { return r.P90 }),
			Mean: med(func(r AdmissionRun) float64 { return r.Mean }), WebhookMs: med(func(r AdmissionRun) float64 { return r.WebhookMs }),
			WebhookCalls: med(func(r AdmissionRun) float64 { return r.WebhookCalls })}
	}
	return out
}

// writeAdmissionReport prints the table of docs/benchmarks.md.
func writeAdmissionReport(w io.Writer, res *AdmissionResult) {
	fmt.Fprintf(w, "\n| FlinkDeployment CREATE (dry run, %s) | webhook | Kyverno | Kyverno / webhook |\n| --- | --- | --- | --- |\n", res.Member)
	for _, object := range []string{"marked", "unmarked"} {
		wh, ky := res.Medians[config.RestoreWebhook+" "+object], res.Medians[config.RestoreKyverno+" "+object]
		for _, row := range []struct {
			what   string
			wv, kv float64
		}{
			{object + ": round trip p50 (ms)", wh.P50, ky.P50},
			{object + ": round trip p90 (ms)", wh.P90, ky.P90},
			{object + ": in mutating webhooks, API server's histogram (ms)", wh.WebhookMs, ky.WebhookMs},
		} {
			ratio := "—"
			if row.wv > 0 {
				ratio = fmt.Sprintf("%.2f", row.kv/row.wv)
			}
			fmt.Fprintf(w, "| %s | %.1f | %.1f | %s |\n", row.what, row.wv, row.kv, ratio)
		}
	}
	fmt.Fprintf(w, "\n| resident memory after the runs | MiB |\n| --- | --- |\n")
	keys := make([]string, 0, len(res.Memory))
	for k := range res.Memory {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "| %s | %.0f |\n", k, float64(res.Memory[k])/1024)
	}
}
