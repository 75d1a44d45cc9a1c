//go:build e2e

package e2e

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/karmada-failover/lab/e2e/framework"
)

// ControllerRestartSpecInput is the input of ControllerRestartSpec.
type ControllerRestartSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	// Candidates are the two clusters the workload may use.
	Candidates []string
}

// ControllerRestartSpec: karmada-controller-manager crashes (SIGKILL) right
// after a failover starts and comes back. A user observes: the failover
// completes and is recorded exactly once, with the marker on the destination.
func ControllerRestartSpec(ctx context.Context, inputGetter func() ControllerRestartSpecInput) {
	var (
		input ControllerRestartSpecInput
		e     *specEnv
	)
	const name = "crash"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		e = newSpecEnv(ctx, "controller-restart", input.E2EConfig, input.Lab, input.ArtifactFolder)
		e.timeline = framework.NewTimeline("karmada-controller-manager killed during a failover (" + e.ns + ")")
	})

	It("records the failover exactly once across a crash of the controller", func(ctx SpecContext) {
		e.deployWithPolicy(ctx, name, 1, framework.PolicyInput{
			Clusters: input.Candidates, TolerationSeconds: 10, ClusterFailover: true,
			StateRules: map[string]string{stateLabel: "{.replicas}"},
		})
		source := e.waitPlaced(ctx, name)[0]
		e.timeline.Mark("failure injected on " + source)
		e.taint(ctx, source, "lab.karmada.io/fault")
		// Let the taint manager start the eviction, then crash the controller.
		time.Sleep(time.Second)
		Expect(input.Lab.Faults.StopController(ctx, true)).To(Succeed())
		e.timeline.Mark("karmada-controller-manager killed")
		e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = input.Lab.Faults.StartController(ctx, nil) })
		time.Sleep(3 * time.Second)
		Expect(input.Lab.Faults.StartController(ctx, nil)).To(Succeed())
		e.timeline.Mark("karmada-controller-manager started again")

		dest := e.waitMovedAway(ctx, name, source)[0]
		e.eventually(ctx, "wait-scheduled", func(g Gomega, ctx context.Context) {
			h := e.history(ctx, name)
			g.Expect(h).To(HaveLen(1))
			g.Expect(h[0].ClustersBeforeFailover).To(Equal([]string{source}))
			g.Expect(h[0].ClustersAfterFailover).To(Equal([]string{dest}))
		}).Should(Succeed())
		e.consistently(ctx, func(g Gomega, ctx context.Context) {
			g.Expect(e.history(ctx, name)).To(HaveLen(1), "recorded exactly once")
		}).Should(Succeed())
		labels, _ := e.memberMeta(ctx, dest, name)
		Expect(labels).To(HaveKeyWithValue(framework.FailoverReasonLabel, "ClusterFailure"))
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
