//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karmada-failover/lab/e2e/framework"
)

// CRDSkewSpecInput is the input of CRDSkewSpec.
type CRDSkewSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	Candidates     []string
}

// historyNotStoredWrites bounds the status writes of ResourceBindings the Karmada API server serves
// while the spec watches a binding whose failover is over: the aggregated status of a healthy
// workload changes seldom, a controller writing in a loop many times a second.
const historyNotStoredWrites = 5

// CRDSkewSpec: the ResourceBinding CRD lacks status.failoverHistory while
// karmada-controller-manager runs with the FailoverHistory gate (the binaries
// upgraded before the CRDs): the API server prunes the field from every write.
// A user observes the failover complete as without the gate — the workload moves,
// the eviction task is retired — a FailoverHistoryNotRecorded Warning on the
// binding saying to update the CRDs, and no hot loop: once the eviction is over,
// the Warning is not repeated and the API server serves (almost) no status
// writes of bindings. The CRD is put back afterwards.
func CRDSkewSpec(ctx context.Context, inputGetter func() CRDSkewSpecInput) {
	var (
		input CRDSkewSpecInput
		e     *specEnv
	)
	const name = "skew"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		e = newSpecEnv(ctx, "crd-skew", input.E2EConfig, input.Lab, input.ArtifactFolder)
	})

	It("retires the eviction task with a Warning, and does not loop", func(ctx SpecContext) {
		k := input.Lab.Karmada
		e.deployWithPolicy(ctx, name, 1, framework.PolicyInput{
			Clusters: input.Candidates, TolerationSeconds: 10, ClusterFailover: true,
			StateRules: map[string]string{stateLabel: "{.replicas}"},
		})
		source := e.waitPlaced(ctx, name)[0]

		By("replacing the ResourceBinding CRD with one without status.failoverHistory")
		restore, err := framework.RemoveFailoverHistoryFromCRD(ctx, k)
		Expect(err).NotTo(HaveOccurred())
		e.cleanups = append(e.cleanups, func(ctx context.Context) {
			By("putting the ResourceBinding CRD back")
			Expect(restore(ctx)).To(Succeed())
			framework.WaitForFailoverHistoryStored(ctx, framework.WaitForFailoverHistoryStoredInput{
				Karmada: k, Namespace: e.ns, Name: name, Kind: "Deployment", Stored: true,
			}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)
		})
		framework.WaitForFailoverHistoryStored(ctx, framework.WaitForFailoverHistoryStoredInput{
			Karmada: k, Namespace: e.ns, Name: name, Kind: "Deployment", Stored: false,
		}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)

		e.taint(ctx, source, "lab.karmada.io/fault")
		e.waitMovedAway(ctx, name, source)

		By("the eviction completes: the task is retired")
		framework.WaitForEvictionTasksRetired(ctx, framework.WaitForEvictionTasksRetiredInput{
			Karmada: k, Namespace: e.ns, Name: name, Kind: "Deployment",
		}, e.cfg.GetIntervals(e.name, "wait-failover")...)
		warning := framework.WaitForEvent(ctx, framework.WaitForEventInput{
			Getter: k, Namespace: e.ns, InvolvedKind: "ResourceBinding",
			Type: corev1.EventTypeWarning, Reason: "FailoverHistoryNotRecorded", MessageContains: []string{"Update the CRDs"},
		}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)
		Expect(e.history(ctx, name)).To(BeEmpty())

		By("no hot loop: the Warning is not repeated, and bindings' status writes stay flat")
		before, err := framework.BindingStatusWrites(ctx, k)
		Expect(err).NotTo(HaveOccurred())
		e.consistently(ctx, func(g Gomega, ctx context.Context) {
			ev, err := k.Kube().CoreV1().Events(e.ns).Get(ctx, warning.Name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(ev.Count).To(Equal(warning.Count), "the FailoverHistoryNotRecorded Warning is emitted again after the eviction is over")
		}).Should(Succeed())
		after, err := framework.BindingStatusWrites(ctx, k)
		Expect(err).NotTo(HaveOccurred())
		Expect(after-before).To(BeNumerically("<=", historyNotStoredWrites),
			"status writes of ResourceBindings served by the Karmada API server while nothing fails over")
		GinkgoWriter.Printf("crd-skew: Warning emitted %d times; %v binding status writes in the quiet window\n", warning.Count, after-before)
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
