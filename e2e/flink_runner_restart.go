//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karmada-failover/lab/apis/flink"
	"github.com/karmada-failover/lab/e2e/framework"
	labapi "github.com/karmada-failover/lab/lab"
)

// FlinkMemberSpecInput is the input of the specs that run a FlinkDeployment
// created directly in one member, Cluster, to check the operator stand-in there.
type FlinkMemberSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	Cluster        string
}

// FlinkRunnerRestartSpec: the lab's stand-in for the Flink operator (the
// member's FlinkDeployment runner) runs a FlinkDeployment created in the
// member, and is restarted while the job runs, as the operator's JobManager
// would be after a pod loss. A user observes first that the operator's CRD
// refuses a misspelt field (Karmada's API server and the member's, strict field
// validation), and that a spec the runner cannot run (another entry class) is
// refused with status.error and a ValidationError Warning event; then the
// status the operator writes
// (jobStatus, jobManagerDeploymentStatus READY, lifecycleState STABLE); after
// the restart the same job resumes from its own latest completed checkpoint
// (Flink's REST API reports the restore), never from scratch, and its
// committed output holds every sequence exactly once; deleting the
// FlinkDeployment stops the job.
func FlinkRunnerRestartSpec(ctx context.Context, inputGetter func() FlinkMemberSpecInput) {
	var (
		input FlinkMemberSpecInput
		e     *specEnv
	)
	const name = "restarted"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		skipWithoutFlinkRunner(input.Lab)
		skipUnsupported(input.Lab, labapi.FaultRestartRunner)
		e = newSpecEnv(ctx, "flink-runner-restart", input.E2EConfig, input.Lab, input.ArtifactFolder)
		e.timeline = framework.NewTimeline(fmt.Sprintf("FlinkDeployment runner restarted on %s (%s)", input.Cluster, e.ns))
	})

	It("resumes the job from its own latest checkpoint after the runner restarts", func(ctx SpecContext) {
		m := input.Lab.Member(input.Cluster)
		fd, checkpointDir := e.flinkTemplate(name)
		fds := e.flinkInMember(ctx, m)

		By("the operator's CRD refuses a misspelt field, in Karmada and in the member (kubectl's strict field validation)")
		misspelt := fd.DeepCopy()
		misspelt.SetName(name + "-misspelt")
		unstructured.RemoveNestedField(misspelt.Object, "spec", "job", "upgradeMode")
		Expect(unstructured.SetNestedField(misspelt.Object, "last-state", "spec", "job", "upgradeMod")).To(Succeed())
		for _, p := range []*framework.ClusterProxy{input.Lab.Karmada, m} {
			_, err := p.Dynamic().Resource(flink.GVR).Namespace(e.ns).Create(ctx, misspelt, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
			Expect(err).To(MatchError(ContainSubstring(`unknown field "spec.job.upgradeMod"`)), "the API server of %s", p.Name)
		}

		By("the runner refuses what it cannot run, with the status error and the Warning event the operator gives")
		unsupported := fd.DeepCopy()
		unsupported.SetName(name + "-unsupported")
		Expect(unstructured.SetNestedField(unsupported.Object, "org.example.NotTheLabJob", "spec", "job", "entryClass")).To(Succeed())
		_, err := fds.Create(ctx, unsupported, metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict})
		Expect(err).NotTo(HaveOccurred())
		framework.WaitForFlinkRejected(ctx, framework.WaitForFlinkRejectedInput{
			Getter: m, Namespace: e.ns, Name: unsupported.GetName(), Error: "entryClass org.example.NotTheLabJob is not supported",
		}, e.cfg.GetIntervals(e.name, "wait-available")...)
		Expect(fds.Delete(ctx, unsupported.GetName(), metav1.DeleteOptions{})).To(Succeed())

		e.createFlinkInMember(ctx, fds, fd)

		By("waiting for the job to run, with the operator's status, and complete 3 checkpoints")
		before := framework.WaitForFlinkRunning(ctx, framework.WaitForFlinkRunningInput{
			Lab: input.Lab, Member: input.Cluster, Namespace: e.ns, Name: name, Stable: true, Checkpoints: 3, OutputFiles: 1,
		}, e.cfg.GetIntervals(e.name, "wait-flink-running")...).Status
		e.timeline.Mark(fmt.Sprintf("job %s RUNNING, 3 checkpoints", before.JobID[:8]))

		By("restarting the runner of " + input.Cluster)
		Expect(labapi.Inject(ctx, input.Lab.Provider, labapi.FaultRestartRunner, input.Cluster)).To(Succeed())
		Expect(labapi.Heal(ctx, input.Lab.Provider, labapi.FaultRestartRunner, input.Cluster, labapi.StartOptions{})).To(Succeed())
		e.timeline.Mark("runner restarted")

		By("the same job resumes from its own latest completed checkpoint")
		resumed := framework.WaitForFlinkRunning(ctx, framework.WaitForFlinkRunningInput{
			Lab: input.Lab, Member: input.Cluster, Namespace: e.ns, Name: name,
			RestoredFromPrefix: checkpointDir + "/" + before.JobID + "/chk-", Checkpoints: 2,
		}, e.cfg.GetIntervals(e.name, "wait-flink-running")...)
		after, restored := resumed.Status, resumed.Checkpoints
		Expect(after.JobID).To(Equal(before.JobID), "a restart keeps the job, as a JobManager recovery with HA does under the operator")
		Expect(restored.LatestCompletedN).To(BeNumerically(">", restored.RestoredID),
			"Flink numbers the checkpoints after the one it restored: the job's directory holds one sequence, not two incarnations")
		e.timeline.Mark("resumed from " + restored.RestoredFrom[strings.LastIndex(restored.RestoredFrom, "/")+1:])

		By("checking the committed output: nothing lost, nothing redone twice")
		report, err := input.Lab.VerifyFlinkOutput(e.ns, name)
		Expect(err).NotTo(HaveOccurred())
		e.timeline.Mark("output verified: " + report.String())
		Expect(report.OK()).To(BeTrue(), "a resume from the latest checkpoint commits every sequence once (an older checkpoint or a fresh start commits some twice): %s", report)
		Expect(report.Overlaps()).To(BeEmpty(), "the job before the restart stopped before the one after it started")

		By("deleting the FlinkDeployment stops the job")
		Expect(fds.Delete(ctx, name, metav1.DeleteOptions{})).To(Succeed())
		framework.WaitForFlinkJobGone(ctx, framework.WaitForFlinkJobGoneInput{REST: after.REST}, e.cfg.GetIntervals(e.name, "wait-cleanup")...)
		summary := fmt.Sprintf("runner restarted: job %s resumed from %s · missing=%d · duplicated=%d", after.JobID[:8],
			restored.RestoredFrom, report.Missing, report.Duplicated)
		AddReportEntry("flink runner restart", summary)
		e.timeline.Title += " — " + summary
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
