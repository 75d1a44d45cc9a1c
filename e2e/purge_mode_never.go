//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	"github.com/karmada-failover/lab/e2e/framework"
)

// ClusterPurgeModeNeverSpecInput is the input of ClusterPurgeModeNeverSpec.
type ClusterPurgeModeNeverSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
}

// ClusterPurgeModeNeverSpec: purge mode Never (keep the old copy, start a new
// one) exists for application failover only. A cluster that crashes or is cut
// off fails over by cluster failover, so there is no Never scenario for a crash
// or a partition: a user who asks for it gets a clear error from Karmada's API
// server and no policy, while the same mode for application failover is
// accepted.
func ClusterPurgeModeNeverSpec(ctx context.Context, inputGetter func() ClusterPurgeModeNeverSpecInput) {
	var (
		input ClusterPurgeModeNeverSpecInput
		e     *specEnv
	)
	const name = "never"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		e = newSpecEnv(ctx, "purge-mode-never", input.E2EConfig, input.Lab, input.ArtifactFolder)
	})

	It("rejects purge mode Never for cluster failover and keeps it for application failover", func(ctx SpecContext) {
		pps := input.Lab.Karmada.Karmada().PolicyV1alpha1().PropagationPolicies(e.ns)
		p := framework.NewPropagationPolicy(framework.PolicyInput{Namespace: e.ns, Name: name, Target: name,
			Clusters: input.Lab.MemberNames(), TolerationSeconds: 10, ClusterFailover: true, PurgeMode: policyv1alpha1.Never})
		_, err := pps.Create(ctx, p, metav1.CreateOptions{})
		Expect(err).To(HaveOccurred(), "a cluster failover with purge mode Never")
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring("spec.failover.cluster.purgeMode"))
		_, err = pps.Get(ctx, name, metav1.GetOptions{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no policy was stored (err %v)", err)

		p = framework.NewPropagationPolicy(framework.PolicyInput{Namespace: e.ns, Name: name, Target: name,
			Clusters: input.Lab.MemberNames(), TolerationSeconds: 10, ApplicationFailover: true, PurgeMode: policyv1alpha1.Never})
		_, err = pps.Create(ctx, p, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred(), "application failover with purge mode Never")
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
