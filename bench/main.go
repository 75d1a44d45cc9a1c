// Command bench measures what recording failover history and marking
// destinations costs: on one hermetic lab it runs the same cluster failover
// against the upstream Karmada build and the patched one (same v1.18.2
// source), alternating A B A B so that machine noise falls on both, and reports
// medians and patched/upstream ratios.
//
// Scenario per run: N Deployments (one replica each) spread one per cluster
// over the members with cluster failover enabled; then member1 is tainted
// NoExecute (untolerated: eviction starts at once, so the drain time is
// Karmada's own processing, not the detection and toleration periods, which
// are the floor of a real failover) and the run measures
//   - drain time: taint → every binding that was on member1 is scheduled
//     elsewhere and its Work is applied there (binding FullyApplied);
//   - API requests per failed-over binding, by verb and resource, from
//     karmada-apiserver's apiserver_request_total;
//   - CPU seconds of karmada-controller-manager and karmada-scheduler during the
//     drain, and the controller's peak RSS (VmHWM; it is restarted per run);
//   - ResourceBinding size (JSON bytes) after the failover.
//
// Usage: go run ./bench [-n 2000] [--rounds 2] [--out _output/bench/result.json]
//
//	go run ./bench plot docs/bench-drain.svg _output/bench/result-*.json
//	go run ./bench flink-rto _output/e2e/*/flink-failovers.jsonl
//	go run ./bench --help
//
// (make bench; BENCH_QUICK=1 runs -n 200). The verbs are in cmd.go. The lab must be up (make lab-up)
// and both builds present (make build build-upstream).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"

	"github.com/karmada-failover/lab/e2e/framework"
	labapi "github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/providers"
)

// benchTaint is the untolerated NoExecute taint that starts the failover.
const benchTaint = "bench.lab.karmada.io/fault"

// Run is one measured failover.
type Run struct {
	Flavour        config.Flavour     `json:"flavour"`
	Round          int                `json:"round"`
	Bindings       int                `json:"bindings"`
	FailedOver     int                `json:"failedOver"`
	DrainSeconds   float64            `json:"drainSeconds"`
	WritesPerRB    float64            `json:"apiWritesPerFailedOverBinding"`
	RequestsPerRB  map[string]float64 `json:"apiRequestsPerFailedOverBinding"`
	ControllerCPU  float64            `json:"controllerManagerCPUSeconds"`
	SchedulerCPU   float64            `json:"schedulerCPUSeconds"`
	ControllerPeak int64              `json:"controllerManagerPeakRSSKiB"`
	BindingBytes   float64            `json:"meanFailedOverBindingBytes"`
}

// Result is the JSON file.
type Result struct {
	Command string    `json:"command"`
	Machine string    `json:"machine"`
	Started time.Time `json:"started"`
	N       int       `json:"n"`
	// Setup names what the runs measured: both Karmada builds and the lab's size. A result
	// is resumed (--resume) only with the same setup.
	Setup Setup `json:"setup"`
	// Rounds is the number of rounds asked for; the file is written after each round, so
	// len(Runs) < 2*Rounds marks a result still in progress.
	Rounds  int                `json:"rounds"`
	Runs    []Run              `json:"runs"`
	Medians map[string]Summary `json:"medians"`
	Ratios  map[string]float64 `json:"ratios"`
	// HistoryLimit is the lab's --failover-history-limit (historyBytesAtCap).
	HistoryLimit int `json:"historyLimit,omitempty"`
	// RoundRatios are patched/upstream of each round, so the spread between rounds shows.
	RoundRatios []RoundRatio `json:"roundRatios,omitempty"`
}

// Setup is what must not change between the rounds of one result.
type Setup struct {
	Patched        string `json:"patched"`
	Upstream       string `json:"upstream"`
	NodesPerMember int    `json:"nodesPerMember"`
	Members        int    `json:"members"`
}

// RoundRatio compares the two runs of one round.
type RoundRatio struct {
	Round int `json:"round"`
	// DrainPerBinding is patched/upstream drain time per failed-over binding.
	DrainPerBinding float64 `json:"drainPerBinding"`
	// ExtraWrites is patched minus upstream API writes per failed-over binding.
	ExtraWrites float64 `json:"extraWrites"`
}

// Summary is median, min and max of a measure for one flavour.
type Summary struct {
	Median, Min, Max float64
}

// openLab opens the running lab of this repository (the current folder) for a benchmark.
func openLab() (*config.Config, labapi.Provider, *labapi.State, *framework.Lab, error) {
	root, _ := os.Getwd()
	cfg, err := config.Load(root)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	p, err := providers.New(cfg)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	st, err := p.State()
	if err != nil || !st.Ready {
		return nil, nil, nil, nil, errors.New("the lab is not up: run make lab-up first")
	}
	fl, err := framework.NewLab(cfg.KarmadaKubeconfig(), cfg.MembersKubeconfig(), p, st)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return cfg, p, st, fl, nil
}

func run(n, rounds int, out string, resume bool, command string) error {
	ctx := context.Background()
	cfg, p, st, fl, err := openLab()
	if err != nil {
		return err
	}
	lab := p
	if !lab.Info().Builds {
		return fmt.Errorf("make bench runs both Karmada builds on one lab, with its processes on this host: the hermetic lab; the %s lab cannot", p.Name())
	}
	setup, err := benchSetup(ctx, cfg.Root, fl)
	if err != nil {
		return err
	}
	res := &Result{Command: command, Machine: machine(), Started: time.Now().UTC(), N: n, Setup: setup}
	if resume {
		if res, err = resumeResult(out, n, rounds, setup); err != nil {
			return err
		}
		res.Command = command
	}
	res.Rounds = rounds
	res.HistoryLimit = st.FailoverHistoryLimit
	done := map[string]bool{}
	for _, r := range res.Runs {
		done[fmt.Sprintf("%d/%s", r.Round, r.Flavour)] = true
	}
	defer func() { _ = lab.SwitchKarmada(ctx, config.FlavourPatched) }()
	for r := 1; r <= rounds; r++ {
		if done[fmt.Sprintf("%d/%s", r, config.FlavourUpstream)] && done[fmt.Sprintf("%d/%s", r, config.FlavourPatched)] {
			fmt.Fprintf(os.Stderr, "round %d/%d: measured before (%s)\n", r, rounds, out)
			continue
		}
		// A round is measured as a pair: a half-measured round is measured again.
		res.Runs = slices.DeleteFunc(res.Runs, func(run Run) bool { return run.Round == r })
		for _, f := range []config.Flavour{config.FlavourUpstream, config.FlavourPatched} {
			fmt.Fprintf(os.Stderr, "round %d/%d: %s, %d bindings\n", r, rounds, f, n)
			if err := lab.SwitchKarmada(ctx, f); err != nil {
				return err
			}
			one, err := measure(ctx, lab, fl, f, r, n)
			if err != nil {
				return fmt.Errorf("round %d %s: %w", r, f, err)
			}
			fmt.Fprintf(os.Stderr, "  drain %.1fs, %d failed over, %.2f writes/binding, controller %.1f CPU-s\n",
				one.DrainSeconds, one.FailedOver, one.WritesPerRB, one.ControllerCPU)
			res.Runs = append(res.Runs, *one)
		}
		// Written after each round: an interrupted benchmark resumes with --resume.
		summarize(res)
		if err := writeResult(res, out, n, rounds); err != nil {
			return err
		}
	}
	return nil
}

// benchSetup reads the builds the lab switches between (their build stamps) and the lab's size.
func benchSetup(ctx context.Context, root string, fl *framework.Lab) (Setup, error) {
	var s Setup
	for _, f := range []config.Flavour{config.FlavourPatched, config.FlavourUpstream} {
		b, err := os.ReadFile(filepath.Join(root, "_output", "bin", string(f), ".build-stamp"))
		if err != nil {
			return s, fmt.Errorf("the %s build is missing (make build build-upstream): %w", f, err)
		}
		stamp := strings.Fields(string(b))
		if len(stamp) == 0 {
			return s, fmt.Errorf("empty build stamp of the %s build", f)
		}
		if f == config.FlavourPatched {
			s.Patched = stamp[0]
		} else {
			s.Upstream = stamp[0]
		}
	}
	s.Members = len(fl.MemberNames())
	nodes, err := fl.Member(fl.MemberNames()[0]).Kube().CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, fmt.Errorf("counting the nodes of %s: %w", fl.MemberNames()[0], err)
	}
	s.NodesPerMember = len(nodes.Items)
	return s, nil
}

// readResult reads a result file.
func readResult(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var res Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &res, nil
}

// resumeResult reads a result file to continue its rounds. It refuses a file measured with
// other builds, another lab size or another number of bindings: rounds of different setups
// do not make one median.
func resumeResult(out string, n, rounds int, setup Setup) (*Result, error) {
	res, err := readResult(out)
	if err != nil {
		return nil, fmt.Errorf("nothing to resume: %w", err)
	}
	if res.N != n || res.Setup != setup {
		return nil, fmt.Errorf("cannot resume %s: it was measured with n=%d and %+v, this run has n=%d and %+v; run without --resume (BENCH_RESUME) to start again",
			out, res.N, res.Setup, n, setup)
	}
	for _, r := range res.Runs {
		if r.Round > rounds {
			return nil, fmt.Errorf("cannot resume %s: it has round %d, more than the %d rounds asked for", out, r.Round, rounds)
		}
	}
	return res, nil
}

// writeResult writes the result file and prints the final JSON line. The
// number of bindings that land on member1 varies with the scheduler's choice,
// so drain_ratio compares the drain time per failed-over binding.
func writeResult(res *Result, out string, n, rounds int) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	// Replace the file in one step, so that an interrupted run leaves the previous rounds intact.
	if err := os.WriteFile(out+".tmp", append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		return err
	}
	final, _ := json.Marshal(map[string]interface{}{
		"drain_ratio": res.Ratios["drainSecondsPerFailedOverBinding"], "drain_total_ratio": res.Ratios["drainSeconds"], "writes_ratio": res.Ratios["apiWritesPerFailedOverBinding"],
		"extra_writes_per_binding": res.Ratios["extraWritesPerBinding"], "history_bytes_at_cap": res.Ratios["historyBytesAtCap"],
		"n": n, "rounds": rounds, "rounds_done": len(res.RoundRatios), "result": out,
	})
	fmt.Println(string(final))
	return nil
}

func measure(ctx context.Context, lab labapi.Builds, fl *framework.Lab, flavour config.Flavour, round, n int) (*Run, error) {
	k := fl.Karmada
	ns := fmt.Sprintf("bench-%d-%s", round, flavour)
	_ = framework.DeleteNamespace(ctx, k, ns)
	if err := waitGone(ctx, k, ns); err != nil {
		return nil, err
	}
	if _, err := k.Kube().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	defer func() {
		_ = fl.TaintCluster(ctx, "member1", benchTaint, "", true)
		_ = framework.DeleteNamespace(ctx, k, ns)
		_ = waitGone(ctx, k, ns)
	}()
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "all"},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			Placement: policyv1alpha1.Placement{
				ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: fl.MemberNames()},
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 1}},
				ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated},
				ClusterTolerations: []corev1.Toleration{{Key: framework.NotReadyTaintKey, Operator: corev1.TolerationOpExists,
					Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))}},
			},
			Failover: &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{
				PurgeMode: policyv1alpha1.PurgeModeDirectly,
				StatePreservation: &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{
					{AliasLabelName: "bench.lab.karmada.io/replicas", JSONPath: "{.replicas}"}}},
			}},
		},
	}
	if _, err := k.Karmada().PolicyV1alpha1().PropagationPolicies(ns).Create(ctx, pp, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		d := framework.NewDeployment(ns, fmt.Sprintf("app-%04d", i), 1)
		d.Spec.Template.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
		if _, err := k.Kube().AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	// Every binding scheduled, applied and with its status collected.
	onMember1 := map[string]bool{}
	if err := poll(ctx, 20*time.Minute, func() (bool, error) {
		list, err := k.Failover().WorkV1alpha2().ResourceBindings(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, rb := range list.Items {
			if len(rb.Spec.Clusters) == 1 && fullyApplied(rb.Status.Conditions) && len(rb.Status.AggregatedStatus) == 1 && rb.Status.AggregatedStatus[0].Status != nil {
				ready++
				if rb.Spec.Clusters[0].Name == "member1" {
					onMember1[rb.Name] = true
				}
			}
		}
		return ready == n, nil
	}); err != nil {
		return nil, fmt.Errorf("waiting for %d bindings applied: %w", n, err)
	}
	before, err := apiRequests(ctx, k)
	if err != nil {
		return nil, err
	}
	cmCPU0, cmPID := cpuSeconds(lab, "karmada-controller-manager")
	schCPU0, _ := cpuSeconds(lab, "karmada-scheduler")

	start := time.Now()
	if err := fl.TaintCluster(ctx, "member1", benchTaint, "true", false); err != nil {
		return nil, err
	}
	var bytes float64
	if err := poll(ctx, 20*time.Minute, func() (bool, error) {
		list, err := k.Failover().WorkV1alpha2().ResourceBindings(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		done, size := 0, 0
		for _, rb := range list.Items {
			if !onMember1[rb.Name] {
				continue
			}
			if len(rb.Spec.Clusters) == 1 && rb.Spec.Clusters[0].Name != "member1" && fullyApplied(rb.Status.Conditions) && appliedOn(rb.Status.AggregatedStatus, rb.Spec.Clusters[0].Name) {
				done++
				b, _ := json.Marshal(rb)
				size += len(b)
			}
		}
		if done == len(onMember1) && done > 0 {
			bytes = float64(size) / float64(done)
			return true, nil
		}
		return false, nil
	}); err != nil {
		return nil, fmt.Errorf("waiting for the drain: %w", err)
	}
	drain := time.Since(start).Seconds()
	// Let the last status writes of the failover land before reading the counters.
	time.Sleep(3 * time.Second)
	after, err := apiRequests(ctx, k)
	if err != nil {
		return nil, err
	}
	cmCPU1, _ := cpuSeconds(lab, "karmada-controller-manager")
	schCPU1, _ := cpuSeconds(lab, "karmada-scheduler")
	failed := float64(len(onMember1))
	r := &Run{Flavour: flavour, Round: round, Bindings: n, FailedOver: len(onMember1), DrainSeconds: drain,
		RequestsPerRB: map[string]float64{}, ControllerCPU: cmCPU1 - cmCPU0, SchedulerCPU: schCPU1 - schCPU0,
		ControllerPeak: peakRSS(cmPID), BindingBytes: bytes}
	for key, v := range after {
		d := v - before[key]
		if d <= 0 {
			continue
		}
		r.RequestsPerRB[key] = d / failed
		if verb := strings.SplitN(key, " ", 2)[0]; verb == "POST" || verb == "PUT" || verb == "PATCH" || verb == "DELETE" {
			r.WritesPerRB += d / failed
		}
	}
	return r, nil
}

func fullyApplied(conds []metav1.Condition) bool {
	for _, c := range conds {
		if c.Type == "FullyApplied" {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func appliedOn(items []workv1alpha2.AggregatedStatusItem, cluster string) bool {
	for _, s := range items {
		if s.ClusterName == cluster {
			return s.Applied
		}
	}
	return false
}

func waitGone(ctx context.Context, k *framework.ClusterProxy, ns string) error {
	return poll(ctx, 10*time.Minute, func() (bool, error) {
		_, err := k.Kube().CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

func poll(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok, nil // an error is retried until the timeout, and reported then
	})
	if err != nil && last != nil {
		return fmt.Errorf("timed out after %s: %w", timeout, last)
	}
	if err != nil {
		return fmt.Errorf("timed out after %s", timeout)
	}
	return nil
}

// apiRequests reads karmada-apiserver's request counters, keyed "VERB resource[/subresource]"
// for the Karmada and core resources a failover touches.
func apiRequests(ctx context.Context, k *framework.ClusterProxy) (map[string]float64, error) {
	families, err := framework.ScrapeMetrics(ctx, k)
	if err != nil {
		return nil, err
	}
	return apiRequestsOf(families), nil
}

// cpuSeconds is the user+system CPU time of a lab process, and its PID.
func cpuSeconds(lab labapi.Builds, name string) (float64, int) {
	pid, ok := lab.ProcessPID(name)
	if !ok {
		return 0, 0
	}
	return cpuSecondsOf(pid), pid
}

func summarize(res *Result) {
	res.Medians, res.Ratios = map[string]Summary{}, map[string]float64{}
	measures := map[string]func(Run) float64{
		"drainSeconds": func(r Run) float64 { return r.DrainSeconds },
		"drainSecondsPerFailedOverBinding": func(r Run) float64 {
			if r.FailedOver == 0 {
				return 0
			}
			return r.DrainSeconds / float64(r.FailedOver)
		},
		"apiWritesPerFailedOverBinding": func(r Run) float64 { return r.WritesPerRB },
		"controllerManagerCPUSeconds":   func(r Run) float64 { return r.ControllerCPU },
		"schedulerCPUSeconds":           func(r Run) float64 { return r.SchedulerCPU },
		"controllerManagerPeakRSSKiB":   func(r Run) float64 { return float64(r.ControllerPeak) },
		"meanFailedOverBindingBytes":    func(r Run) float64 { return r.BindingBytes },
	}
	for name, get := range measures {
		for _, f := range []config.Flavour{config.FlavourUpstream, config.FlavourPatched} {
			var vals []float64
			for _, r := range res.Runs {
				if r.Flavour == f {
					vals = append(vals, get(r))
				}
			}
			res.Medians[string(f)+"/"+name] = summary(vals)
		}
		up, pa := res.Medians["upstream/"+name].Median, res.Medians["patched/"+name].Median
		if up > 0 {
			res.Ratios[name] = pa / up
		}
	}
	res.RoundRatios = nil
	byRound := map[int]map[config.Flavour]Run{}
	for _, r := range res.Runs {
		if byRound[r.Round] == nil {
			byRound[r.Round] = map[config.Flavour]Run{}
		}
		byRound[r.Round][r.Flavour] = r
	}
	for round, runs := range byRound {
		up, okU := runs[config.FlavourUpstream]
		pa, okP := runs[config.FlavourPatched]
		if !okU || !okP || up.FailedOver == 0 || pa.FailedOver == 0 || up.DrainSeconds == 0 {
			continue
		}
		res.RoundRatios = append(res.RoundRatios, RoundRatio{Round: round,
			DrainPerBinding: (pa.DrainSeconds / float64(pa.FailedOver)) / (up.DrainSeconds / float64(up.FailedOver)),
			ExtraWrites:     pa.WritesPerRB - up.WritesPerRB})
	}
	sort.Slice(res.RoundRatios, func(i, j int) bool { return res.RoundRatios[i].Round < res.RoundRatios[j].Round })
	res.Ratios["extraWritesPerBinding"] = res.Medians["patched/apiWritesPerFailedOverBinding"].Median - res.Medians["upstream/apiWritesPerFailedOverBinding"].Median
	// One history item per failed-over binding here; the cap holds --failover-history-limit items.
	limit := historyLimit(res)
	res.Ratios["historyBytesAtCap"] = float64(limit) * (res.Medians["patched/meanFailedOverBindingBytes"].Median - res.Medians["upstream/meanFailedOverBindingBytes"].Median)
}

// historyLimit is the lab's history limit a result was measured with (5, Karmada's default,
// for results recorded before it was).
func historyLimit(res *Result) int {
	if res.HistoryLimit > 0 {
		return res.HistoryLimit
	}
	return 5
}

func summary(v []float64) Summary {
	if len(v) == 0 {
		return Summary{}
	}
	sort.Float64s(v)
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return Summary{Median: m, Min: v[0], Max: v[len(v)-1]}
}
