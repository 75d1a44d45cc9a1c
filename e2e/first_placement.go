//go:build e2e

package e2e

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		specName = "first-placement"
		input    FirstPlacementSpecInput
		ns       string
	)
	const name = "hello"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		Expect(input.Lab).NotTo(BeNil(), "Invalid argument. input.Lab can't be nil when calling %s spec", specName)
		Expect(input.Cluster).NotTo(BeEmpty(), "Invalid argument. input.Cluster can't be empty when calling %s spec", specName)
		var err error
		ns, err = framework.CreateNamespace(ctx, input.Lab.Karmada, specName)
		Expect(err).NotTo(HaveOccurred())
	})

	It("propagates a Deployment that becomes Available on the member, with no failover record or marker", func(ctx SpecContext) {
		k := input.Lab.Karmada
		_, err := k.Kube().AppsV1().Deployments(ns).Create(ctx, framework.NewDeployment(ns, name, 3), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		pp := framework.NewPropagationPolicy(framework.PolicyInput{
			Namespace: ns, Name: name, Target: name, Clusters: []string{input.Cluster}, TolerationSeconds: 10,
			ClusterFailover: true, StateRules: map[string]string{stateLabel: "{.replicas}"},
		})
		_, err = k.Karmada().PolicyV1alpha1().PropagationPolicies(ns).Create(ctx, pp, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		cfg := input.E2EConfig
		rbName := framework.BindingName(name, "Deployment")
		Eventually(func(g Gomega, ctx context.Context) {
			g.Expect(framework.DeploymentAvailable(ctx, input.Lab.Member(input.Cluster), ns, name)).To(Succeed())
			rb, err := framework.GetBinding(ctx, k, ns, rbName)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(framework.ScheduledClusters(rb)).To(Equal([]string{input.Cluster}))
			g.Expect(framework.BindingHealthy(rb)).To(Succeed())
		}).WithContext(ctx).WithTimeout(cfg.Timeout(specName, "wait-available")).WithPolling(cfg.Polling(specName, "wait-available")).Should(Succeed())

		rb, err := framework.GetBinding(ctx, k, ns, rbName)
		Expect(err).NotTo(HaveOccurred())
		Expect(rb.Status.FailoverHistory).To(BeEmpty())
		d, err := input.Lab.Member(input.Cluster).Kube().AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Labels).NotTo(HaveKey(framework.FailoverReasonLabel))
		Expect(d.Labels).NotTo(HaveKey(stateLabel))
		Expect(d.Annotations).NotTo(HaveKey(framework.FailoverFromAnnotation))
	})

	AfterEach(func(ctx SpecContext) {
		if CurrentSpecReport().Failed() {
			_ = input.Lab.DumpResources(ctx, ns, filepath.Join(input.ArtifactFolder, ns))
		}
		Expect(framework.DeleteNamespace(ctx, input.Lab.Karmada, ns)).To(Succeed())
	})
}
