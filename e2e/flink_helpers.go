//go:build e2e

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	"github.com/karmada-failover/lab/apis/flink"
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

// flinkTemplate is the lab's sequence job as FlinkDeployment name in the
// spec's namespace, checkpointing to the lab's S3 store and committing its
// output to the lab's output directory; it returns the checkpoint directory too.
func (e *specEnv) flinkTemplate(name string) (*unstructured.Unstructured, string) {
	checkpointDir := "s3://flink-checkpoints/" + e.ns + "/" + name
	template := framework.NewFlinkDeployment(e.ns, name, checkpointDir)
	output := e.lab.FlinkOutputURI(e.ns, name)
	Expect(output).NotTo(BeEmpty(), "the lab has no Flink output directory")
	framework.SetFlinkOutput(template.Object, output)
	return template, checkpointDir
}

// createFlink creates the FlinkDeployment template in Karmada and its
// PropagationPolicy: one of candidates, the NotReady taint tolerated for 10 s,
// and failover as given.
func (e *specEnv) createFlink(ctx context.Context, template *unstructured.Unstructured, candidates []string, failover *policyv1alpha1.FailoverBehavior) {
	k := e.lab.Karmada
	_, err := k.Dynamic().Resource(flink.GVR).Namespace(e.ns).Create(ctx, template, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	name := template.GetName()
	pp := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: flink.GroupVersion.String(), Kind: flink.Kind, Name: name}},
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

// waitFlinkCheckpointed waits until FlinkDeployment name runs on one member,
// RUNNING with at least checkpoints completed checkpoints (Flink's REST API),
// and returns that member and the job's status there.
func (e *specEnv) waitFlinkCheckpointed(ctx context.Context, name string, checkpoints int) (string, framework.FlinkJobStatus) {
	By(fmt.Sprintf("waiting for the job to run on one member and complete %d checkpoints", checkpoints))
	r := framework.WaitForFlinkRunning(ctx, framework.WaitForFlinkRunningInput{
		Lab: e.lab, Namespace: e.ns, Name: name, Checkpoints: checkpoints,
	}, e.cfg.GetIntervals(e.name, "wait-flink-running")...)
	return r.Member, r.Status
}

// waitFlinkRestored waits until the job behind rest reports, in Flink's REST
// API, the restore from path ("" = no restore at all) and at least two
// completed checkpoints of its own (so its output is committed), and returns
// its checkpoint history.
func (e *specEnv) waitFlinkRestored(ctx context.Context, rest framework.FlinkREST, path, where string) framework.Checkpoints {
	return framework.WaitForFlinkRestored(ctx, framework.WaitForFlinkRestoredInput{REST: rest, RestoredFrom: path, Where: where},
		e.cfg.GetIntervals(e.name, "wait-flink-running")...)
}

// flinkInMember waits for the spec's namespace in member m (Karmada creates it
// in every member) and returns the FlinkDeployments there.
func (e *specEnv) flinkInMember(ctx context.Context, m *framework.ClusterProxy) dynamic.ResourceInterface {
	framework.WaitForNamespace(ctx, framework.WaitForNamespaceInput{Getter: m, Name: e.ns}, e.cfg.GetIntervals(e.name, "wait-available")...)
	return m.Dynamic().Resource(flink.GVR).Namespace(e.ns)
}

// createFlinkInMember creates fd in fds (kubectl's strict field validation), to
// be deleted when the spec ends.
func (e *specEnv) createFlinkInMember(ctx context.Context, fds dynamic.ResourceInterface, fd *unstructured.Unstructured) {
	_, err := fds.Create(ctx, fd, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
	Expect(err).NotTo(HaveOccurred())
	name := fd.GetName()
	e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = fds.Delete(ctx, name, metav1.DeleteOptions{}) })
}

// followFlinkFailover waits until FlinkDeployment name has moved from source
// to another member and its job RUNNING there (marking the timeline), and
// returns that member, the FlinkDeployment's annotations as it arrived (the
// restore's record of what it set: Karmada may re-apply the template later,
// and spec.job.initialSavepointPath is read on the first deployment only) and
// the job's status there.
func (e *specEnv) followFlinkFailover(ctx context.Context, name, source string) (string, map[string]string, framework.FlinkJobStatus) {
	var arrived map[string]string
	var now framework.FlinkJobStatus
	moved := framework.WaitForFailover(ctx, framework.WaitForFailoverInput{
		Lab: e.lab, Namespace: e.ns, Name: name, Kind: "FlinkDeployment", Source: source, Timeline: e.timeline,
		Arrived: func(ctx context.Context, dest string) error {
			fd, err := e.lab.Member(dest).Dynamic().Resource(flink.GVR).Namespace(e.ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			e.timeline.Mark("FlinkDeployment applied on " + dest)
			arrived = fd.GetAnnotations()
			now = e.lab.ReadFlinkStatus(dest, fd)
			if now.State != "RUNNING" {
				return fmt.Errorf("job %s, not RUNNING", now.State)
			}
			e.timeline.Mark("job RUNNING on " + dest)
			return nil
		},
	}, e.cfg.GetIntervals(e.name, "wait-flink-failover")...)
	return moved.Destination, arrived, now
}

// waitJobIDCollected waits until Karmada has the status of FlinkDeployment
// name from source, healthy, with jobID in it: the job id it will preserve.
func (e *specEnv) waitJobIDCollected(ctx context.Context, name, source, jobID string) {
	By("waiting for Karmada to collect the job's status from " + source + " (the jobId it will preserve)")
	framework.WaitForBindingStatus(ctx, framework.WaitForBindingStatusInput{
		Karmada: e.lab.Karmada, Namespace: e.ns, Name: name, Kind: "FlinkDeployment", Cluster: source, Contains: jobID, Healthy: true,
	}, e.cfg.GetIntervals(e.name, "wait-flink-running")...)
}

// directlyFailover is the failover the user guide recommends for Flink: cluster
// and application failover with purge mode Directly, the job id preserved.
// Karmada hands the job id over only when the old job is confirmed stopped:
// its Work deleted, or its cluster fenced with the out-of-service taint.
func directlyFailover() *policyv1alpha1.FailoverBehavior {
	state := jobIDState("{.jobStatus.jobId}")
	return &policyv1alpha1.FailoverBehavior{
		Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly, StatePreservation: state},
		Application: &policyv1alpha1.ApplicationFailoverBehavior{
			DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To(flinkUnhealthyToleration)},
			PurgeMode:          policyv1alpha1.PurgeModeDirectly, StatePreservation: state,
		},
	}
}
