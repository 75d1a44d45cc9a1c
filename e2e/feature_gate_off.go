//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
	labapi "github.com/karmada-failover/lab/lab"
)

// FeatureGateOffSpecInput is the input of FeatureGateOffSpec.
type FeatureGateOffSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	Candidates     []string
}

// FeatureGateOffSpec: karmada-controller-manager runs with FailoverHistory=false
// (the default of the gate). A user observes upstream's behaviour: the workload
// fails over, but no failoverHistory is written and no failover marker is put on
// the destination. The controller is restarted with the lab's gates afterwards.
func FeatureGateOffSpec(ctx context.Context, inputGetter func() FeatureGateOffSpecInput) {
	var (
		input FeatureGateOffSpecInput
		e     *specEnv
	)
	const name = "gateoff"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		e = newSpecEnv(ctx, "gate-off", input.E2EConfig, input.Lab, input.ArtifactFolder)
		By("restarting karmada-controller-manager with FailoverHistory=false")
		Expect(input.Lab.Provider.StopComponent(ctx, labapi.ControllerManagerComponent, false)).To(Succeed())
		e.cleanups = append(e.cleanups, func(ctx context.Context) {
			_ = input.Lab.Provider.StopComponent(ctx, labapi.ControllerManagerComponent, false)
			Expect(input.Lab.Provider.StartComponent(ctx, labapi.ControllerManagerComponent, labapi.StartOptions{})).To(Succeed())
		})
		Expect(input.Lab.Provider.StartComponent(ctx, labapi.ControllerManagerComponent, labapi.StartOptions{Gates: map[string]bool{"FailoverHistory": false}})).To(Succeed())
	})

	It("fails over as upstream does: no history, no marker", func(ctx SpecContext) {
		e.deployWithPolicy(ctx, name, 1, framework.PolicyInput{
			Clusters: input.Candidates, TolerationSeconds: 10, ClusterFailover: true,
			StateRules: map[string]string{stateLabel: "{.replicas}"},
		})
		source := e.waitPlaced(ctx, name)[0]
		e.taint(ctx, source, "lab.karmada.io/fault")
		dest := e.waitMovedAway(ctx, name, source)[0]
		e.consistently(ctx, func(g Gomega, ctx context.Context) {
			g.Expect(e.history(ctx, name)).To(BeEmpty())
			labels, annotations := e.memberMeta(ctx, dest, name)
			g.Expect(labels).NotTo(HaveKey(workv1alpha2.FailoverReasonLabel))
			g.Expect(annotations).NotTo(HaveKey(workv1alpha2.FailoverFromAnnotation))
		}).Should(Succeed())
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
