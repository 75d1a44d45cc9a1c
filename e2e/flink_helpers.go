//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	"github.com/karmada-failover/lab/e2e/framework"
)

// flinkUnhealthyToleration is how long the Flink specs' application failover
// tolerates an unhealthy FlinkDeployment. It exceeds a Flink JVM's cold start on
// a loaded 2-core machine (about 10 s idle, more under load): with 10 s, a job
// that was still starting on the destination was evicted from there too.
const flinkUnhealthyToleration int32 = 30

// jobIDState is the StatePreservation rule of the Flink specs: the job id
// read from the FlinkDeployment's status by jsonPath, carried under
// jobIDLabel.
func jobIDState(jsonPath string) *policyv1alpha1.StatePreservation {
	return &policyv1alpha1.StatePreservation{Rules: []policyv1alpha1.StatePreservationRule{{AliasLabelName: jobIDLabel, JSONPath: jsonPath}}}
}

// createFlink creates the FlinkDeployment template in Karmada and its
// PropagationPolicy: one of candidates, the NotReady taint tolerated for 10 s,
// and failover as given.
func (e *specEnv) createFlink(ctx context.Context, template *unstructured.Unstructured, candidates []string, failover *policyv1alpha1.FailoverBehavior) {
	k := e.lab.Karmada
	_, err := k.Dynamic().Resource(framework.FlinkDeploymentGVR).Namespace(e.ns).Create(ctx, template, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	name := template.GetName()
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "flink.apache.org/v1beta1", Kind: "FlinkDeployment", Name: name}},
			PropagateDeps:     true,
			Placement: policyv1alpha1.Placement{
				ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: candidates},
				SpreadConstraints: []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: 1, MaxGroups: 1}},
				ClusterTolerations: []corev1.Toleration{{Key: framework.NotReadyTaintKey, Operator: corev1.TolerationOpExists,
					Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(10))}},
			},
			Failover: failover,
		},
	}
	_, err = k.Karmada().PolicyV1alpha1().PropagationPolicies(e.ns).Create(ctx, pp, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
}

// flinkPlacement returns the one cluster the FlinkDeployment name is scheduled
// to, and its binding.
func (e *specEnv) flinkPlacement(g Gomega, ctx context.Context, name string) string {
	rb, err := framework.GetBinding(ctx, e.lab.Karmada, e.ns, framework.BindingName(name, "FlinkDeployment"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rb.Spec.Clusters).To(HaveLen(1))
	return rb.Spec.Clusters[0].Name
}
