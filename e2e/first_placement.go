//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
)

// FirstPlacementSpecInput is the input of FirstPlacementSpec.
type FirstPlacementSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	// Cluster the Deployment is propagated to.
	Cluster string
}

// FirstPlacementSpec: a Deployment propagated to one member becomes Available
// there (through the member's kube-scheduler and kwok's stages) and healthy in
// its ResourceBinding, with an empty failover history and no failover marker.
func FirstPlacementSpec(ctx context.Context, inputGetter func() FirstPlacementSpecInput) {
	var (
		input FirstPlacementSpecInput
		e     *specEnv
	)
	const name = "hello"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		Expect(input.Cluster).NotTo(BeEmpty(), "Invalid argument. input.Cluster can't be empty when calling first-placement spec")
		e = newSpecEnv(ctx, "first-placement", input.E2EConfig, input.Lab, input.ArtifactFolder)
	})

	It("propagates a Deployment that becomes Available on the member, with no failover record or marker", func(ctx SpecContext) {
		e.deployWithPolicy(ctx, name, 3, framework.PolicyInput{
			Clusters: []string{input.Cluster}, TolerationSeconds: 10,
			ClusterFailover: true, StateRules: map[string]string{stateLabel: "{.replicas}"},
		})
		Expect(e.waitPlaced(ctx, name)).To(Equal([]string{input.Cluster}))
		Expect(e.history(ctx, name)).To(BeEmpty())
		labels, annotations := e.memberMeta(ctx, input.Cluster, name)
		Expect(labels).NotTo(HaveKey(workv1alpha2.FailoverReasonLabel))
		Expect(labels).NotTo(HaveKey(stateLabel))
		Expect(annotations).NotTo(HaveKey(workv1alpha2.FailoverFromAnnotation))
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
