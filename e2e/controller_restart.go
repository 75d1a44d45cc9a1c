//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
	labapi "github.com/karmada-failover/lab/lab"
)

// KillPoint is where in a failover a scenario kills karmada-controller-manager.
type KillPoint string

const (
	// KillAfterTask: the eviction task exists, the history item does not.
	KillAfterTask KillPoint = "after the eviction task, before the history item"
	// KillAfterHistory: the history item exists, the destination's Work does
	// not carry the marker yet.
	KillAfterHistory KillPoint = "after the history item, before the destination is marked"
	// KillAfterMarker: the failover is recorded and the destination marked.
	KillAfterMarker KillPoint = "after the destination is marked"
)

// ControllerRestartSpecInput is the input of ControllerRestartSpec.
type ControllerRestartSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	// Candidates are the two clusters the workload may use.
	Candidates []string
	// At are the points of a failover where the controller is killed, one
	// failover after the other, cycling.
	At []KillPoint
	// Failovers is how many failovers run back and forth between the two
	// candidates (default 1).
	Failovers int
	// HistoryLimit is the lab's --failover-history-limit.
	HistoryLimit int
}

// ControllerRestartSpec: karmada-controller-manager crashes (SIGKILL) at a
// chosen point of a failover and comes back. The point is reached by holding
// the next write at the Karmada API server (a ValidatingAdmissionPolicy that
// denies it: the controller sees an admission error and retries) and observing
// the state before it, so the kill is exact and not timed. A user observes:
// every failover completes after the restart and is recorded exactly once,
// with the marker on its destination and the marker's time equal to the
// history item's; the history keeps the newest HistoryLimit items.
func ControllerRestartSpec(ctx context.Context, inputGetter func() ControllerRestartSpecInput) {
	var (
		input ControllerRestartSpecInput
		e     *specEnv
	)
	const name = "crash"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		Expect(input.Candidates).To(HaveLen(2), "Invalid argument. Candidates must name two clusters")
		Expect(input.At).NotTo(BeEmpty(), "Invalid argument. At")
		for _, at := range input.At {
			Expect(at).To(BeElementOf(KillAfterTask, KillAfterHistory, KillAfterMarker), "Invalid argument. At")
		}
		if input.Failovers == 0 {
			input.Failovers = 1
		}
		Expect(input.HistoryLimit).To(BeNumerically(">", 0), "Invalid argument. HistoryLimit")
		e = newSpecEnv(ctx, "controller-restart", input.E2EConfig, input.Lab, input.ArtifactFolder)
		e.timeline = framework.NewTimeline(fmt.Sprintf("karmada-controller-manager killed in %d failover(s) (%s)", input.Failovers, e.ns))
	})

	It("records every failover exactly once and marks its destination, across crashes of the controller at exact points", func(ctx SpecContext) {
		e.deployWithPolicy(ctx, name, 1, framework.PolicyInput{
			Clusters: input.Candidates, TolerationSeconds: 10, ClusterFailover: true,
			StateRules: map[string]string{stateLabel: "{.replicas}"},
		})
		source := e.waitPlaced(ctx, name)[0]
		for n := 1; n <= input.Failovers; n++ {
			at := input.At[(n-1)%len(input.At)]
			dest := input.Candidates[0]
			if dest == source {
				dest = input.Candidates[1]
			}
			By(fmt.Sprintf("failover %d/%d, %s -> %s, controller killed %s", n, input.Failovers, source, dest, at))
			killDuringFailover(ctx, e, name, source, dest, at, n)
			Expect(min(n, input.HistoryLimit)).To(Equal(len(e.history(ctx, name))), "the history keeps the newest %d items", input.HistoryLimit)
			source = dest
		}
		e.consistently(ctx, func(g Gomega, ctx context.Context) {
			g.Expect(e.history(ctx, name)).To(HaveLen(min(input.Failovers, input.HistoryLimit)), "nothing recorded twice")
		}).Should(Succeed())
		AddReportEntry("controller killed during failovers", fmt.Sprintf("%d failovers, each recorded once and its destination marked", input.Failovers))
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}

// killDuringFailover fails workload name over from source to dest (an
// untolerated NoExecute taint on source, removed once it moved), kills the
// controller at point at, restarts it, and checks the failover is recorded
// exactly once with dest marked.
func killDuringFailover(ctx context.Context, e *specEnv, name, source, dest string, at KillPoint, n int) {
	k := e.lab.Karmada
	binding := framework.BindingName(name, "Deployment")
	var hold *framework.Hold
	switch at {
	case KillAfterTask:
		hold = holdHistory(ctx, e, binding, n)
	case KillAfterHistory:
		hold = holdMarkedWork(ctx, e, dest, n)
	}
	if hold != nil {
		e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = hold.Release(ctx) })
	}

	// The history item of this failover: from source, started after the taint
	// (the API server's clock stamps both, in whole seconds).
	tainted := time.Now().Add(-time.Second).Truncate(time.Second)
	e.timeline.Mark(fmt.Sprintf("failover %d: failure injected on %s", n, source))
	const faultKey = "lab.karmada.io/fault"
	Expect(e.lab.TaintCluster(ctx, source, faultKey, "e2e", false)).To(Succeed())
	e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = e.lab.TaintCluster(ctx, source, faultKey, "", true) })
	stage := map[KillPoint]framework.FailoverStage{
		KillAfterTask: framework.FailoverEvicting, KillAfterHistory: framework.FailoverRecorded, KillAfterMarker: framework.FailoverMarked,
	}[at]
	framework.WaitForFailoverStage(ctx, framework.WaitForFailoverStageInput{
		Lab: e.lab, Namespace: e.ns, Name: name, Source: source, Destination: dest, Since: tainted, Reason: "ClusterFailure", Stage: stage,
	}, e.cfg.GetIntervals(e.name, "wait-failover")...)
	e.timeline.Mark(fmt.Sprintf("failover %d reached: %s", n, at))
	Expect(labapi.Inject(ctx, e.lab.Provider, labapi.FaultKillController, "")).To(Succeed())
	e.timeline.Mark("karmada-controller-manager killed (SIGKILL)")
	e.cleanups = append(e.cleanups, func(ctx context.Context) {
		_ = labapi.Heal(ctx, e.lab.Provider, labapi.FaultKillController, "", labapi.StartOptions{})
	})
	if hold != nil {
		Expect(hold.Release(ctx)).To(Succeed())
	}
	Expect(labapi.Heal(ctx, e.lab.Provider, labapi.FaultKillController, "", labapi.StartOptions{})).To(Succeed())
	e.timeline.Mark("karmada-controller-manager started again")

	Expect(e.waitMovedAway(ctx, name, source)).To(Equal([]string{dest}))
	framework.WaitForFailoverRecordedOnce(ctx, framework.WaitForFailoverRecordedOnceInput{
		Lab: e.lab, Namespace: e.ns, Name: name, Source: source, Destination: dest, Since: tainted, Reason: "ClusterFailure",
	}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)
	// The failover is over once its eviction task is retired. The next failure, of
	// dest, would otherwise find source still "in the process of eviction", and the
	// scheduler (upstream's rule) would place the workload nowhere until the task timed
	// out: on kind, where the restarted controller's member informers take seconds to
	// sync, the next taint came before the retirement and the spec waited in vain.
	framework.WaitForEvictionTasksRetired(ctx, framework.WaitForEvictionTasksRetiredInput{
		Karmada: k, Namespace: e.ns, Name: name, Kind: "Deployment", From: source,
	}, e.cfg.GetIntervals(e.name, "wait-failover")...)
	Expect(e.lab.TaintCluster(ctx, source, faultKey, "", true)).To(Succeed())
	e.timeline.Mark(fmt.Sprintf("failover %d recorded once, %s marked, its eviction over; %s untainted", n, dest, source))
}

// holdHistory denies every status write of the spec's binding that adds a
// failover history item, and returns once the API server enforces it.
func holdHistory(ctx context.Context, e *specEnv, binding string, n int) *framework.Hold {
	k := e.lab.Karmada
	// A new item is one whose startTime and reason no item of the old object
	// has (at the history limit a new item replaces the oldest: the size stays).
	hold, err := framework.NewHold(ctx, k, framework.HoldInput{
		Name: fmt.Sprintf("%s-history-%d", e.ns, n), APIGroup: "work.karmada.io", Resource: "resourcebindings/status",
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
		Match:      fmt.Sprintf("object.metadata.namespace == %q", e.ns),
		Allow: "!has(object.status) || !has(object.status.failoverHistory) || size(object.status.failoverHistory) == 0 || " +
			"(has(oldObject.status) && has(oldObject.status.failoverHistory) && object.status.failoverHistory.all(i, " +
			"oldObject.status.failoverHistory.exists(o, o.startTime == i.startTime && o.reason == i.reason)))",
	})
	Expect(err).NotTo(HaveOccurred())
	By("holding the history write of " + binding + " at the API server")
	rbs := k.Dynamic().Resource(schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "resourcebindings"}).Namespace(e.ns)
	framework.WaitForHoldEnforced(ctx, framework.WaitForHoldEnforcedInput{What: "a history write", Write: func(ctx context.Context) error {
		rb, err := rbs.Get(ctx, binding, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading the binding: %w", err)
		}
		// A valid item (the schema's required fields), so that only the hold can deny it.
		probe := map[string]interface{}{"startTime": metav1.Now().UTC().Format(time.RFC3339), "reason": "ClusterFailure",
			"fromCluster": "probe", "producer": "e2e", "clustersBeforeFailover": []interface{}{"probe"}}
		items, _, _ := unstructured.NestedSlice(rb.Object, "status", "failoverHistory")
		if err := unstructured.SetNestedSlice(rb.Object, append(items, probe), "status", "failoverHistory"); err != nil {
			return fmt.Errorf("adding a history item: %w", err)
		}
		_, err = rbs.UpdateStatus(ctx, rb, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)
	return hold
}

// holdMarkedWork denies creating or updating a Work for dest that carries the
// failover marker on one of the spec's objects, and returns once the API
// server enforces it.
func holdMarkedWork(ctx context.Context, e *specEnv, dest string, n int) *framework.Hold {
	k := e.lab.Karmada
	execNS := "karmada-es-" + dest
	hold, err := framework.NewHold(ctx, k, framework.HoldInput{
		Name: fmt.Sprintf("%s-marker-%d", e.ns, n), APIGroup: "work.karmada.io", Resource: "works",
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Match: fmt.Sprintf("object.metadata.namespace == %q && has(object.spec.workload) && has(object.spec.workload.manifests) && "+
			"object.spec.workload.manifests.exists(m, has(m.metadata) && has(m.metadata.namespace) && m.metadata.namespace == %q)", execNS, e.ns),
		Allow: fmt.Sprintf("!object.spec.workload.manifests.exists(m, has(m.metadata.labels) && %q in m.metadata.labels)", workv1alpha2.FailoverReasonLabel),
	})
	Expect(err).NotTo(HaveOccurred())
	By("holding Works for " + dest + " that carry the failover marker at the API server")
	probe := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: execNS, Name: e.ns + "-hold-probe"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":%q,"name":"probe","labels":{%q:"ClusterFailure"}}}`,
				e.ns, workv1alpha2.FailoverReasonLabel)),
		}}}}},
	}
	framework.WaitForHoldEnforced(ctx, framework.WaitForHoldEnforcedInput{What: "a marked Work", Write: func(ctx context.Context) error {
		_, err := k.Karmada().WorkV1alpha1().Works(execNS).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)
	return hold
}
