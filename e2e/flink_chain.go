//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	"github.com/karmada-failover/lab/e2e/framework"
)

// FlinkChainSpecInput is the input of FlinkChainSpec.
type FlinkChainSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	// Candidates: three members, A (first placement), B and C.
	Candidates []string
}

// FlinkChainSpec is upstream issue #6232's case: a checkpointed Flink job fails
// over from A (application failover, purge mode Directly) to B, where it never
// becomes healthy (B's runner has no task slots: the job never runs), and then
// from B to C. C is kept out of the first failover by a NoExecute taint the
// spec removes once the job is on B. A user observes: Karmada carries to C the
// job id of the job that ran on A (the last healthy run), not the new one B's
// never-healthy job reported, and C restores that job's latest completed
// checkpoint, as Flink's REST API and the checkpoint store confirm, with every
// sequence committed exactly once.
func FlinkChainSpec(ctx context.Context, inputGetter func() FlinkChainSpecInput) {
	var (
		input FlinkChainSpecInput
		e     *specEnv
	)
	const name = "chain"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		skipWithoutFlinkRunner(input.Lab)
		Expect(input.Candidates).To(HaveLen(3), "Invalid argument. FlinkChainSpec needs three candidates")
		e = newSpecEnv(ctx, "flink-chain", input.E2EConfig, input.Lab, input.ArtifactFolder)
		e.timeline = framework.NewTimeline(fmt.Sprintf("Flink failover A → B (never healthy) → C (%s)", e.ns))
	})

	It("restores on C the latest checkpoint of the job that ran on A when the job never became healthy on B", func(ctx SpecContext) {
		template, checkpointDir := e.flinkTemplate(name)
		state := jobIDState("{.jobStatus.jobId}")
		e.createFlink(ctx, template, input.Candidates, &policyv1alpha1.FailoverBehavior{
			Application: &policyv1alpha1.ApplicationFailoverBehavior{
				DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To(flinkUnhealthyToleration)},
				PurgeMode:          policyv1alpha1.PurgeModeDirectly, StatePreservation: state,
			},
		})
		a, old := e.waitFlinkCheckpointed(ctx, name, 3)
		others := clustersExcept(input.Candidates, a)
		slices.Sort(others)
		b, c := others[0], others[1]
		e.timeline.Mark(fmt.Sprintf("job %s RUNNING on %s (A), 3 checkpoints", old.JobID[:8], a))

		By(fmt.Sprintf("keeping %s (C) out of the first failover and taking the task slots of %s (B)", c, b))
		const hold = "lab.karmada.io/chain-hold"
		e.taint(ctx, c, hold)
		Expect(input.Lab.Provider.StarveFlink(ctx, b, true)).To(Succeed())
		e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = input.Lab.Provider.StarveFlink(ctx, b, false) })

		By("failing the job on " + a + " (A): it loses its task slots")
		injected := time.Now()
		Expect(input.Lab.Provider.StarveFlink(ctx, a, true)).To(Succeed())
		e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = input.Lab.Provider.StarveFlink(ctx, a, false) })
		e.timeline.Mark("failure injected on " + a)

		By("the job moves to " + b + " (B) and never becomes healthy there")
		onB := framework.WaitForFlinkReported(ctx, framework.WaitForFlinkReportedInput{Lab: input.Lab, Namespace: e.ns, Name: name, Member: b},
			e.cfg.GetIntervals(e.name, "wait-flink-failover")...)
		Expect(onB.State).NotTo(Equal("RUNNING"), "no task slots on %s: the job cannot run", b)
		e.timeline.Mark(fmt.Sprintf("job on %s (B): %s, job id %q", b, onB.State, onB.JobID))

		By("letting " + c + " (C) take the job once Karmada gives up on " + b)
		Expect(input.Lab.TaintCluster(ctx, c, hold, "", true)).To(Succeed())
		runningOnC := framework.WaitForFlinkRunning(ctx, framework.WaitForFlinkRunningInput{
			Lab: input.Lab, Member: c, Scheduled: true, Namespace: e.ns, Name: name,
		}, e.cfg.GetIntervals(e.name, "wait-flink-failover")...)
		fd, onC := runningOnC.FlinkDeployment, runningOnC.Status
		rto := time.Since(injected)
		e.timeline.Mark("job RUNNING on " + c + " (C)")
		By("two failovers recorded: A → B and B → C")
		framework.WaitForFailoverHistory(ctx, framework.WaitForFailoverHistoryInput{
			Karmada: input.Lab.Karmada, Namespace: e.ns, Name: name, Kind: "FlinkDeployment", Count: 2,
		}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)

		By("Karmada carried the job id of the last healthy run (A's), not the one B's never-healthy job reported")
		Expect(fd.GetAnnotations()).To(HaveKeyWithValue("restore.lab.karmada.io/from-job-id", old.JobID),
			"the job id Karmada carried to %s (B's job reported %q)", c, onB.JobID)
		By("C restored the latest checkpoint of the job that ran on A")
		path, _, _ := unstructured.NestedString(fd.Object, "spec", "job", "initialSavepointPath")
		Expect(path).To(HavePrefix(checkpointDir+"/"+old.JobID+"/chk-"), "the last healthy run's checkpoints (decision %s)",
			fd.GetAnnotations()[decisionAnnotation])
		restored := e.waitFlinkRestored(ctx, onC.REST, path, c)
		latest, err := input.Lab.Checkpoints.LatestCompleted(ctx, checkpointDir, old.JobID)
		Expect(err).NotTo(HaveOccurred())
		Expect(restored.RestoredID).To(Equal(latest), "the latest completed checkpoint of job %s in the store", old.JobID)
		report, err := input.Lab.VerifyFlinkOutput(e.ns, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(report.Duplicated).To(BeZero(), "%s", report)
		Expect(report.Missing).To(BeZero(), "%s", report)
		summary := fmt.Sprintf("A=%s (job %s) → B=%s (%s, job %s) → C=%s: carried job %s, restored %s of A's job (latest chk-%d) · decision %s · missing=%d · duplicated=%d · rto=%.0fs",
			a, old.JobID[:8], b, onB.State, shortID(onB.JobID), c, shortID(fd.GetAnnotations()["restore.lab.karmada.io/from-job-id"]), path[strings.LastIndex(path, "/")+1:], latest,
			fd.GetAnnotations()[decisionAnnotation], report.Missing, report.Duplicated, rto.Seconds())
		AddReportEntry("flink failover chain", summary)
		fmt.Fprintln(GinkgoWriter, summary)
		e.timeline.Title += " — " + summary
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}

// shortID is the first 8 characters of a job id, as Flink's UI shows it.
func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
