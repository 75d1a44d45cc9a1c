//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha1 "github.com/karmada-io/karmada/pkg/apis/work/v1alpha1"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
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
	// At is the point of the failover where the controller is killed.
	At KillPoint
}

// ControllerRestartSpec: karmada-controller-manager crashes (SIGKILL) at a
// chosen point of a failover and comes back. The point is reached by holding
// the next write at the Karmada API server (a ValidatingAdmissionPolicy that
// denies it: the controller sees an admission error and retries) and observing
// the state before it, so the kill is exact and not timed. A user observes: the
// failover completes after the restart and is recorded exactly once, with the
// marker on the destination and its time equal to the history item's.
func ControllerRestartSpec(ctx context.Context, inputGetter func() ControllerRestartSpecInput) {
	var (
		input ControllerRestartSpecInput
		e     *specEnv
	)
	const name = "crash"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		Expect(input.Candidates).To(HaveLen(2), "Invalid argument. Candidates must name two clusters")
		Expect(input.At).To(BeElementOf(KillAfterTask, KillAfterHistory, KillAfterMarker), "Invalid argument. At")
		e = newSpecEnv(ctx, "controller-restart", input.E2EConfig, input.Lab, input.ArtifactFolder)
		e.timeline = framework.NewTimeline(fmt.Sprintf("karmada-controller-manager killed %s (%s)", input.At, e.ns))
	})

	It("records the failover exactly once and marks the destination, across a crash of the controller at an exact point", func(ctx SpecContext) {
		k := input.Lab.Karmada
		e.deployWithPolicy(ctx, name, 1, framework.PolicyInput{
			Clusters: input.Candidates, TolerationSeconds: 10, ClusterFailover: true,
			StateRules: map[string]string{stateLabel: "{.replicas}"},
		})
		source := e.waitPlaced(ctx, name)[0]
		dest := input.Candidates[0]
		if dest == source {
			dest = input.Candidates[1]
		}
		binding := framework.BindingName(name, "Deployment")

		var hold *framework.Hold
		switch input.At {
		case KillAfterTask:
			hold = holdHistory(ctx, e, binding)
		case KillAfterHistory:
			hold = holdMarkedWork(ctx, e, dest)
		}
		if hold != nil {
			e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = hold.Release(ctx) })
		}

		e.timeline.Mark("failure injected on " + source)
		e.taint(ctx, source, "lab.karmada.io/fault")
		By("waiting for the failover to reach the point: " + string(input.At))
		e.eventually(ctx, "wait-failover", func(g Gomega, ctx context.Context) {
			rb, err := framework.GetBinding(ctx, k, e.ns, binding)
			g.Expect(err).NotTo(HaveOccurred())
			labels, _ := e.memberMeta(ctx, dest, name)
			switch input.At {
			case KillAfterTask:
				var task bool
				for _, t := range rb.Spec.GracefulEvictionTasks {
					task = task || t.FromCluster == source
				}
				g.Expect(task).To(BeTrue(), "an eviction task from %s", source)
				g.Expect(rb.Status.FailoverHistory).To(BeEmpty())
			case KillAfterHistory:
				g.Expect(rb.Status.FailoverHistory).To(HaveLen(1))
				g.Expect(labels).NotTo(HaveKey(framework.FailoverReasonLabel), "the marked Work is held")
			case KillAfterMarker:
				g.Expect(rb.Status.FailoverHistory).To(HaveLen(1))
				g.Expect(labels).To(HaveKeyWithValue(framework.FailoverReasonLabel, "ClusterFailure"))
			}
		}).Should(Succeed())
		e.timeline.Mark("reached: " + string(input.At))
		Expect(input.Lab.Faults.StopController(ctx, true)).To(Succeed())
		e.timeline.Mark("karmada-controller-manager killed (SIGKILL)")
		e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = input.Lab.Faults.StartController(ctx, nil) })
		if hold != nil {
			Expect(hold.Release(ctx)).To(Succeed())
		}
		Expect(input.Lab.Faults.StartController(ctx, nil)).To(Succeed())
		e.timeline.Mark("karmada-controller-manager started again")

		By("checking the failover completes and is recorded exactly once")
		Expect(e.waitMovedAway(ctx, name, source)).To(Equal([]string{dest}))
		var item workv1alpha2.FailoverHistoryItem
		e.eventually(ctx, "wait-scheduled", func(g Gomega, ctx context.Context) {
			h := e.history(ctx, name)
			g.Expect(h).To(HaveLen(1))
			item = h[0]
			g.Expect(item.ClustersBeforeFailover).To(Equal([]string{source}))
			g.Expect(item.ClustersAfterFailover).To(Equal([]string{dest}))
			labels, annotations := e.memberMeta(ctx, dest, name)
			g.Expect(labels).To(HaveKeyWithValue(framework.FailoverReasonLabel, "ClusterFailure"))
			g.Expect(annotations).To(HaveKeyWithValue(framework.FailoverTimeAnnotation, item.StartTime.UTC().Format(time.RFC3339)))
		}).Should(Succeed())
		e.consistently(ctx, func(g Gomega, ctx context.Context) {
			g.Expect(e.history(ctx, name)).To(HaveLen(1), "recorded exactly once")
		}).Should(Succeed())
		e.timeline.Mark("recorded once, " + dest + " marked")
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}

// holdHistory denies every status write of the spec's binding that adds a
// failover history item, and returns once the API server enforces it.
func holdHistory(ctx context.Context, e *specEnv, binding string) *framework.Hold {
	k := e.lab.Karmada
	hold, err := framework.NewHold(ctx, k, framework.HoldInput{
		Name: e.ns + "-history", APIGroup: "work.karmada.io", Resource: "resourcebindings/status",
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
		Match:      fmt.Sprintf("object.metadata.namespace == %q", e.ns),
		Allow: "!has(object.status) || !has(object.status.failoverHistory) || size(object.status.failoverHistory) == 0 || " +
			"(has(oldObject.status) && has(oldObject.status.failoverHistory) && size(object.status.failoverHistory) <= size(oldObject.status.failoverHistory))",
	})
	Expect(err).NotTo(HaveOccurred())
	By("holding the history write of " + binding + " at the API server")
	rbs := k.Dynamic().Resource(schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "resourcebindings"}).Namespace(e.ns)
	e.eventually(ctx, "wait-scheduled", func(g Gomega, ctx context.Context) {
		rb, err := rbs.Get(ctx, binding, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		probe := map[string]interface{}{"startTime": metav1.Now().UTC().Format(time.RFC3339), "reason": "ClusterFailure",
			"clustersBeforeFailover": []interface{}{"probe"}}
		items, _, _ := unstructured.NestedSlice(rb.Object, "status", "failoverHistory")
		g.Expect(unstructured.SetNestedSlice(rb.Object, append(items, probe), "status", "failoverHistory")).To(Succeed())
		_, err = rbs.UpdateStatus(ctx, rb, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		g.Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)).To(BeTrue(), "the hold denies a history write (got %v)", err)
		g.Expect(err.Error()).To(ContainSubstring("held by the e2e suite"))
	}).Should(Succeed())
	return hold
}

// holdMarkedWork denies creating or updating a Work for dest that carries the
// failover marker on one of the spec's objects, and returns once the API
// server enforces it.
func holdMarkedWork(ctx context.Context, e *specEnv, dest string) *framework.Hold {
	k := e.lab.Karmada
	execNS := "karmada-es-" + dest
	hold, err := framework.NewHold(ctx, k, framework.HoldInput{
		Name: e.ns + "-marker", APIGroup: "work.karmada.io", Resource: "works",
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Match: fmt.Sprintf("object.metadata.namespace == %q && has(object.spec.workload) && has(object.spec.workload.manifests) && "+
			"object.spec.workload.manifests.exists(m, has(m.metadata) && has(m.metadata.namespace) && m.metadata.namespace == %q)", execNS, e.ns),
		Allow: fmt.Sprintf("!object.spec.workload.manifests.exists(m, has(m.metadata.labels) && %q in m.metadata.labels)", framework.FailoverReasonLabel),
	})
	Expect(err).NotTo(HaveOccurred())
	By("holding Works for " + dest + " that carry the failover marker at the API server")
	probe := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: execNS, Name: e.ns + "-hold-probe"},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":%q,"name":"probe","labels":{%q:"ClusterFailure"}}}`,
				e.ns, framework.FailoverReasonLabel)),
		}}}}},
	}
	e.eventually(ctx, "wait-scheduled", func(g Gomega, ctx context.Context) {
		_, err := k.Karmada().WorkV1alpha1().Works(execNS).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		g.Expect(apierrors.IsInvalid(err) || apierrors.IsForbidden(err)).To(BeTrue(), "the hold denies a marked Work (got %v)", err)
		g.Expect(err.Error()).To(ContainSubstring("held by the e2e suite"))
	}).Should(Succeed())
	return hold
}
