//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/karmada-failover/lab/apis/flink"
	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"

	"github.com/karmada-failover/lab/e2e/framework"
	"github.com/karmada-failover/lab/lab/flinkrunner"
)

// FlinkStuckDeletionSpecInput is the input of FlinkStuckDeletionSpec.
type FlinkStuckDeletionSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	Candidates     []string
}

// operatorFinalizer is flink-kubernetes-operator's finalizer on every
// FlinkDeployment (the runner keeps it too).
const operatorFinalizer = "flinkdeployments.flink.apache.org/finalizer"

// FlinkStuckDeletionSpec: a FlinkDeployment with the operator's savepoint on
// deletion loses its task slots (the job stays CREATED); application failover,
// purge mode Directly, deletes it on its member, and the deletion never
// completes: the operator cannot take a savepoint of a job that is not running
// (FLINK-40388). A user observes: no job starts elsewhere, for longer than a
// minute; the binding has the condition EvictedWorkloadTerminating naming the
// cluster, the object and its finalizer, and saying how to unblock it; once the
// user removes the finalizer (the old job is known not to run: Flink's REST API
// says CREATED), the job moves, restored from the old job's latest checkpoint,
// the condition goes, and the committed output holds every record exactly once.
func FlinkStuckDeletionSpec(ctx context.Context, inputGetter func() FlinkStuckDeletionSpecInput) {
	var (
		input FlinkStuckDeletionSpecInput
		e     *specEnv
	)
	const name = "sequence"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		skipWithoutFlinkRunner(input.Lab)
		e = newSpecEnv(ctx, "flink", input.E2EConfig, input.Lab, input.ArtifactFolder)
		e.timeline = framework.NewTimeline(fmt.Sprintf("Flink deletion that never completes (%s)", e.ns))
	})
	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))

	It("waits for the old copy, says so on the binding, and moves once the user removes the finalizer", func(ctx SpecContext) {
		k := input.Lab.Karmada
		template, checkpointDir := e.flinkTemplate(name)
		for key, v := range map[string]string{flinkrunner.SavepointOnDeletionKey: "true", "state.savepoints.dir": checkpointDir + "-savepoints"} {
			Expect(unstructured.SetNestedField(template.Object, v, "spec", "flinkConfiguration", key)).To(Succeed())
		}
		e.createFlink(ctx, template, input.Candidates, directlyFailover())
		source, old := e.waitFlinkCheckpointed(ctx, name, 3)
		e.waitJobIDCollected(ctx, name, source, old.JobID)
		e.timeline.Mark(fmt.Sprintf("job %s RUNNING on %s", old.JobID[:8], source))

		By("taking the task slots of " + source + ": the job stays CREATED, the FlinkDeployment turns unhealthy")
		Expect(input.Lab.Provider.StarveFlink(ctx, source, true)).To(Succeed())
		e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = input.Lab.Provider.StarveFlink(ctx, source, false) })
		e.timeline.Mark("failure injected on " + source)

		By("Karmada deletes the FlinkDeployment on " + source + "; the savepoint on deletion cannot be taken (FLINK-40388)")
		srcFDs := input.Lab.Member(source).Dynamic().Resource(flink.GVR).Namespace(e.ns)
		deleting := framework.WaitForObjectTerminating(ctx, framework.WaitForObjectTerminatingInput{
			Getter: input.Lab.Member(source), GVR: flink.GVR, Namespace: e.ns, Name: name, Finalizer: operatorFinalizer,
		}, e.cfg.GetIntervals(e.name, "wait-flink-failover")...)
		e.timeline.Mark("FlinkDeployment deleting on " + source)

		By("the binding says the failover waits for " + source + ", and no job starts elsewhere meanwhile")
		cond := framework.WaitForBindingCondition(ctx, framework.WaitForBindingConditionInput{
			Karmada: k, Namespace: e.ns, Name: name, Kind: "FlinkDeployment", Type: workv1alpha2.EvictedWorkloadTerminating,
		}, e.cfg.GetIntervals(e.name, "wait-flink-failover")...)
		e.timeline.Mark("binding condition " + workv1alpha2.EvictedWorkloadTerminating)
		Expect(cond.Status).To(Equal(metav1.ConditionTrue))
		Expect(cond.Message).To(And(ContainSubstring("cluster "+source), ContainSubstring(operatorFinalizer),
			ContainSubstring("remove the finalizers"), ContainSubstring("out-of-service")), "names the cluster, the object's finalizer and the ways out")
		// A minute after the Work's deletion, which comes just before the object's (whose
		// deletionTimestamp has a resolution of one second).
		Expect(time.Since(deleting)).To(BeNumerically(">", 55*time.Second), "reported after a minute of waiting")
		for _, m := range input.Candidates {
			if m == source {
				continue
			}
			_, err := input.Lab.Member(m).Dynamic().Resource(flink.GVR).Namespace(e.ns).Get(ctx, name, metav1.GetOptions{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no FlinkDeployment on %s while the old one is being deleted (err %v)", m, err)
		}
		evs, err := input.Lab.Member(source).Kube().CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		Expect(err).NotTo(HaveOccurred())
		cleanupFailed := false
		for _, ev := range evs.Items {
			cleanupFailed = cleanupFailed || ev.Reason == flinkrunner.ReasonCleanupFailed
		}
		Expect(cleanupFailed).To(BeTrue(), "the operator's CleanupFailed Warning on %s", source)

		By("removing the finalizer on " + source + ": Flink's REST API says the old job does not run")
		fd, err := srcFDs.Get(ctx, name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		oldNow := input.Lab.ReadFlinkStatus(source, fd)
		Expect(oldNow.JobID).To(Equal(old.JobID), "the same job on %s", source)
		jobState, err := oldNow.REST.State(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(jobState).NotTo(Equal("RUNNING"), "the old job must not run before its finalizer is removed")
		_, err = srcFDs.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())
		e.timeline.Mark("finalizer removed on " + source)

		dest, arrived, now := e.followFlinkFailover(ctx, name, source)
		restoredPath := arrived["restore.lab.karmada.io/checkpoint"]
		Expect(restoredPath).To(HavePrefix(checkpointDir+"/"+old.JobID+"/chk-"), "restored from the old job's checkpoints (no savepoint was taken)")
		restored := e.waitFlinkRestored(ctx, now.REST, restoredPath, dest)

		framework.WaitForBindingCondition(ctx, framework.WaitForBindingConditionInput{
			Karmada: k, Namespace: e.ns, Name: name, Kind: "FlinkDeployment", Type: workv1alpha2.EvictedWorkloadTerminating, Absent: true,
		}, e.cfg.GetIntervals(e.name, "wait-flink-running")...)

		report, err := input.Lab.VerifyFlinkOutput(e.ns, name)
		Expect(err).NotTo(HaveOccurred())
		e.timeline.Mark("output verified: " + report.String())
		Expect(report.Overlaps()).To(BeEmpty(), "one writer at a time: %+v", report.Writers)
		Expect(report.Missing).To(BeZero(), "%s", report)
		Expect(report.Duplicated).To(BeZero(), "%s", report)
		summary := fmt.Sprintf("deletion stuck on %s for %.0fs until the finalizer was removed; restored chk-%d on %s · missing=%d · duplicated=%d",
			source, time.Since(deleting).Seconds(), restored.RestoredID, dest, report.Missing, report.Duplicated)
		AddReportEntry("flink stuck deletion", summary)
		e.timeline.Title += " — " + summary
	})
}
