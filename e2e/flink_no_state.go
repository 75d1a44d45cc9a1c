//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	"github.com/karmada-failover/lab/apis/flink"
	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
)

// FlinkNoStateSpecInput is the input of FlinkNoStateSpec.
type FlinkNoStateSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	Candidates     []string
}

// forgedJobID is the job id the resource template carries itself under the
// alias label name: 32 hex characters, so only its origin makes it invalid.
const forgedJobID = "0123456789abcdef0123456789abcdef"

// FlinkNoStateSpec: a FlinkDeployment fails over (application failover, purge
// mode Directly) but Karmada extracts no state: the StatePreservation rule's
// JSONPath finds nothing in the job's status. The resource template carries a
// job id label of its own under the rule's alias name, which Karmada
// propagates unchanged. A user observes: Karmada warns that it preserved
// nothing; the restore webhook on the destination ignores the template's
// unlisted key and, since the marker says the object arrived by failover and
// Karmada withheld nothing, restores the newest completed checkpoint under the
// deployment's checkpoint directory: the old job's latest (decision
// restored-latest-in-directory), as Flink's REST API and the store confirm,
// with every sequence committed exactly once.
func FlinkNoStateSpec(ctx context.Context, inputGetter func() FlinkNoStateSpecInput) {
	var (
		input FlinkNoStateSpecInput
		e     *specEnv
	)
	const name = "nostate"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		skipWithoutFlinkRunner(input.Lab)
		e = newSpecEnv(ctx, "flink-no-state", input.E2EConfig, input.Lab, input.ArtifactFolder)
		e.timeline = framework.NewTimeline(fmt.Sprintf("Flink failover without state (%s)", e.ns))
	})

	It("restores the newest checkpoint under the deployment's directory, never from the template's own job id, with nothing lost or duplicated", func(ctx SpecContext) {
		k := input.Lab.Karmada
		template, checkpointDir := e.flinkTemplate(name)
		template.SetLabels(map[string]string{jobIDLabel: forgedJobID})
		// The rule's JSONPath finds nothing: Karmada cannot extract the job id.
		e.createFlink(ctx, template, input.Candidates, &policyv1alpha1.FailoverBehavior{
			Application: &policyv1alpha1.ApplicationFailoverBehavior{
				DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To(flinkUnhealthyToleration)},
				PurgeMode:          policyv1alpha1.PurgeModeDirectly, StatePreservation: jobIDState("{.jobStatus.noSuchField}"),
			},
		})

		By("waiting for the job to run on one member, healthy in Karmada's view")
		source := framework.WaitForBindingStatus(ctx, framework.WaitForBindingStatusInput{
			Karmada: k, Namespace: e.ns, Name: name, Kind: "FlinkDeployment", Healthy: true,
		}, e.cfg.GetIntervals(e.name, "wait-flink-running")...)
		e.timeline.Mark("job RUNNING on " + source)
		srcFD, err := input.Lab.Member(source).Dynamic().Resource(flink.GVR).Namespace(e.ns).Get(ctx, name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		old := input.Lab.ReadFlinkStatus(source, srcFD)
		By("waiting for the job on " + source + " to commit output (the sink's part files)")
		framework.WaitForFlinkOutput(ctx, framework.WaitForFlinkOutputInput{Lab: input.Lab, Namespace: e.ns, Name: name, Committed: true},
			e.cfg.GetIntervals(e.name, "wait-flink-running")...)

		By("starving the job on " + source + " (application failover)")
		injected := time.Now()
		Expect(input.Lab.Provider.StarveFlink(ctx, source, true)).To(Succeed())
		e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = input.Lab.Provider.StarveFlink(ctx, source, false) })
		e.timeline.Mark("failure injected on " + source)

		dest := framework.WaitForBindingScheduled(ctx, framework.WaitForBindingScheduledInput{
			Karmada: k, Namespace: e.ns, Name: name, Kind: "FlinkDeployment", Away: source,
		}, e.cfg.GetIntervals(e.name, "wait-flink-failover")...)
		e.timeline.Mark("scheduled to " + dest)

		By("Karmada warns that the rule extracted nothing")
		framework.WaitForEvent(ctx, framework.WaitForEventInput{
			Getter: k, Namespace: e.ns, Type: corev1.EventTypeWarning, Reason: "PreservedStateExtractionFailed", MessageContains: []string{jobIDLabel},
		}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)

		By("the restore webhook on " + dest + " ignores the template's job id and restores the newest checkpoint under the deployment's directory")
		fd := framework.WaitForFlinkRunning(ctx, framework.WaitForFlinkRunningInput{Lab: input.Lab, Member: dest, Namespace: e.ns, Name: name},
			e.cfg.GetIntervals(e.name, "wait-flink-failover")...).FlinkDeployment
		rto := time.Since(injected)
		e.timeline.Mark("job RUNNING on " + dest)
		Expect(fd.GetLabels()).To(HaveKeyWithValue(jobIDLabel, forgedJobID), "the template's own label reached %s", dest)
		Expect(fd.GetAnnotations()).NotTo(HaveKey(workv1alpha2.FailoverPreservedKeysAnnotation), "Karmada listed no preserved keys")
		Expect(fd.GetAnnotations()).To(HaveKeyWithValue(decisionAnnotation, "restored-latest-in-directory"))
		Expect(fd.GetAnnotations()).To(HaveKeyWithValue("restore.lab.karmada.io/restored-job-id", old.JobID), "the old job's checkpoint, not the template's job id")
		Expect(fd.GetAnnotations()).NotTo(HaveKey("restore.lab.karmada.io/from-job-id"))
		path, _, _ := unstructured.NestedString(fd.Object, "spec", "job", "initialSavepointPath")
		Expect(path).To(HavePrefix(checkpointDir+"/"+old.JobID+"/chk-"), "restored from the old job's checkpoints")

		By("Flink reports the restore from that checkpoint, the latest the old job completed")
		st := input.Lab.ReadFlinkStatus(dest, fd)
		Expect(st.JobID).NotTo(Equal(forgedJobID))
		restored := e.waitFlinkRestored(ctx, st.REST, path, dest)
		latest, err := input.Lab.Checkpoints.LatestCompleted(ctx, checkpointDir, old.JobID)
		Expect(err).NotTo(HaveOccurred())
		Expect(restored.RestoredID).To(Equal(latest), "the latest completed checkpoint of job %s in the store", old.JobID)

		By("the committed output holds every sequence exactly once")
		report, err := input.Lab.VerifyFlinkOutput(e.ns, name)
		Expect(err).NotTo(HaveOccurred())
		e.timeline.Mark("output verified: " + report.String())
		Expect(report.Duplicated).To(BeZero(), "%s", report)
		Expect(report.Missing).To(BeZero(), "%s", report)
		summary := fmt.Sprintf("no state carried: restored the newest checkpoint under the directory, chk-%d of the old job · missing=%d · duplicated=%d · rto=%.0fs",
			latest, report.Missing, report.Duplicated, rto.Seconds())
		AddReportEntry("flink failover without state", summary)
		e.timeline.Title += " — " + summary
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
