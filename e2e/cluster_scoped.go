//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

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

		source := framework.WaitForClusterRolePlaced(ctx, framework.WaitForClusterRolePlacedInput{Lab: input.Lab, Name: name},
			e.cfg.GetIntervals(e.name, "wait-available")...)

		e.taint(ctx, source, "lab.karmada.io/fault")
		framework.WaitForClusterRoleFailover(ctx, framework.WaitForClusterRoleFailoverInput{Lab: input.Lab, Name: name, Source: source},
			e.cfg.GetIntervals(e.name, "wait-failover")...)
		By("purge mode Directly removes the ClusterRole from " + source)
		framework.WaitForObjectDeleted(ctx, framework.WaitForObjectDeletedInput{
			Getter: input.Lab.Member(source), GVR: framework.ClusterRoleGVR, Name: name,
		}, e.cfg.GetIntervals(e.name, "wait-cleanup")...)
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
