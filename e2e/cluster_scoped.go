//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
)

// ClusterScopedSpecInput is the input of ClusterScopedSpec.
type ClusterScopedSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	Candidates     []string
}

// ClusterScopedSpec: a cluster-scoped resource (a ClusterRole) propagated by a
// ClusterPropagationPolicy fails over. A user observes the same as for a
// namespaced one, on the ClusterResourceBinding: one history item, and the
// marker on the ClusterRole in the destination only.
func ClusterScopedSpec(ctx context.Context, inputGetter func() ClusterScopedSpecInput) {
	var (
		input ClusterScopedSpecInput
		e     *specEnv
		name  string
	)

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		e = newSpecEnv(ctx, "cluster-scoped", input.E2EConfig, input.Lab, input.ArtifactFolder)
		name = "lab-" + e.ns // unique per run
	})

	It("records the failover on the ClusterResourceBinding and marks the destination", func(ctx SpecContext) {
		k := input.Lab.Karmada
		_, err := k.Kube().RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		e.cleanups = append(e.cleanups, func(ctx context.Context) {
			_ = k.Kube().RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
			_ = k.Karmada().PolicyV1alpha1().ClusterPropagationPolicies().Delete(ctx, name, metav1.DeleteOptions{})
		})
		_, err = k.Karmada().PolicyV1alpha1().ClusterPropagationPolicies().Create(ctx, &policyv1alpha1.ClusterPropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: name}},
				Placement: policyv1alpha1.Placement{
					ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: input.Candidates},
					SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 1}},
					ClusterTolerations: []corev1.Toleration{{Key: framework.NotReadyTaintKey, Operator: corev1.TolerationOpExists,
						Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(10))}},
				},
				Failover: &policyv1alpha1.FailoverBehavior{Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly}},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		crbName := framework.BindingName(name, "ClusterRole")
		var source string
		e.eventually(ctx, "wait-available", func(g Gomega, ctx context.Context) {
			crb, err := k.Failover().WorkV1alpha2().ClusterResourceBindings().Get(ctx, crbName, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(crb.Spec.Clusters).To(HaveLen(1))
			source = crb.Spec.Clusters[0].Name
			_, err = input.Lab.Member(source).Kube().RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
		}).Should(Succeed())

		e.taint(ctx, source, "lab.karmada.io/fault")
		var dest string
		e.eventually(ctx, "wait-failover", func(g Gomega, ctx context.Context) {
			crb, err := k.Failover().WorkV1alpha2().ClusterResourceBindings().Get(ctx, crbName, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(crb.Spec.Clusters).To(HaveLen(1))
			dest = crb.Spec.Clusters[0].Name
			g.Expect(dest).NotTo(Equal(source))
			g.Expect(crb.Status.FailoverHistory).To(HaveLen(1))
			g.Expect(crb.Status.FailoverHistory[0].Reason).To(BeEquivalentTo("ClusterFailure"))
			g.Expect(crb.Status.FailoverHistory[0].ClustersBeforeFailover).To(Equal([]string{source}))
			g.Expect(crb.Status.FailoverHistory[0].ClustersAfterFailover).To(Equal([]string{dest}))
			cr, err := input.Lab.Member(dest).Kube().RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cr.Labels).To(HaveKeyWithValue(workv1alpha2.FailoverReasonLabel, "ClusterFailure"))
			g.Expect(cr.Annotations).To(HaveKeyWithValue(workv1alpha2.FailoverFromAnnotation, source))
		}).Should(Succeed())
		e.eventually(ctx, "wait-cleanup", func(ctx context.Context) bool {
			_, err := input.Lab.Member(source).Kube().RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}).Should(BeTrue(), "purge mode Directly removes the ClusterRole from %s", source)
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
