//go:build e2e

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/karmada-failover/lab/e2e/framework"
	"github.com/karmada-failover/lab/lab/flinkrunner"
)

// FlinkUpgradeSpec: a user changes the spec of a running FlinkDeployment in a
// member (restartNonce), once per upgradeMode, and the job is redeployed as
// flink-kubernetes-operator redeploys it. A user observes, in Flink's REST API
// and in the job's committed output:
//
//   - last-state: the same job id, restored from its own latest checkpoint;
//     nothing committed twice;
//   - savepoint: a new job id, restored from the replaced job's state (the
//     operator takes a savepoint; the lab's runner uses that job's latest
//     completed checkpoint); nothing committed twice;
//   - stateless: a new job id, no restore: the job starts from empty state and
//     commits its first sequences again.
func FlinkUpgradeSpec(ctx context.Context, inputGetter func() FlinkMemberSpecInput) {
	var (
		input FlinkMemberSpecInput
		e     *specEnv
	)
	const name = "upgraded"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		skipWithoutFlinkRunner(input.Lab)
		e = newSpecEnv(ctx, "flink-upgrade", input.E2EConfig, input.Lab, input.ArtifactFolder)
		e.timeline = framework.NewTimeline(fmt.Sprintf("FlinkDeployment spec changes by upgradeMode on %s (%s)", input.Cluster, e.ns))
	})

	It("redeploys the job as the operator does for last-state, savepoint and stateless", func(ctx SpecContext) {
		m := input.Lab.Member(input.Cluster)
		fd, checkpointDir := e.flinkTemplate(name)
		fds := e.flinkInMember(ctx, m)
		e.createFlinkInMember(ctx, fds, fd)

		// running waits for a job other than previous (or the same one when
		// same) to run and complete two checkpoints of its own, and returns it
		// with its checkpoint history.
		running := func(previous string, same bool) (framework.FlinkJobStatus, framework.Checkpoints) {
			want := framework.WaitForFlinkRunningInput{Lab: input.Lab, Member: input.Cluster, Namespace: e.ns, Name: name, Reconciled: true, Checkpoints: 2}
			if same {
				// The recovered job counts from its restore on.
				want.JobID, want.CheckpointsSinceRestore = previous, 2
			} else {
				want.NotJobID = previous // a redeploy: another job (the first deployment: any)
			}
			r := framework.WaitForFlinkRunning(ctx, want, e.cfg.GetIntervals(e.name, "wait-flink-running")...)
			return r.Status, r.Checkpoints
		}
		upgrade := func(mode string, nonce int) {
			patch := fmt.Sprintf(`{"spec":{"restartNonce":%d,"job":{"upgradeMode":%q}}}`, nonce, mode)
			_, err := fds.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			Expect(err).NotTo(HaveOccurred())
			e.timeline.Mark(fmt.Sprintf("restartNonce %d, upgradeMode %s", nonce, mode))
		}
		verified := func(what string) {
			report, err := input.Lab.VerifyFlinkOutput(e.ns, name)
			Expect(err).NotTo(HaveOccurred())
			e.timeline.Mark(what + ": " + report.String())
			Expect(report.OK()).To(BeTrue(), "%s: %s", what, report)
		}

		By("the first deployment")
		first, _ := running("", false)
		e.timeline.Mark("job " + first.JobID[:8] + " RUNNING")
		jobs := map[string]framework.FlinkJobStatus{}
		previous := first
		for i, step := range []struct {
			mode string
			// sameJob: the job keeps its id; restored: it resumes the
			// previous job's state (else it starts from empty state).
			sameJob, restored bool
		}{
			{flinkrunner.UpgradeLastState, true, true},
			{flinkrunner.UpgradeSavepoint, false, true},
			{flinkrunner.UpgradeStateless, false, false},
		} {
			By(fmt.Sprintf("upgradeMode %s: same job %t, restored %t", step.mode, step.sameJob, step.restored))
			before, err := previous.REST.Checkpoints(ctx)
			Expect(err).NotTo(HaveOccurred())
			upgrade(step.mode, i+1)
			st, cp := running(previous.JobID, step.sameJob)
			jobs[step.mode] = st
			if !step.restored {
				Expect(cp.RestoredFrom).To(BeEmpty(), "no restore")
				Expect(st.JobID).NotTo(Equal(first.JobID))
				continue
			}
			// The job deployed first owns the checkpoint directory the
			// last-state job went on writing to.
			Expect(cp.RestoredFrom).To(HavePrefix(checkpointDir + "/" + first.JobID + "/chk-"))
			Expect(cp.RestoredID).To(BeNumerically(">=", before.LatestCompletedN), "the replaced job's latest checkpoint")
			verified(step.mode + " upgrade")
			previous = st
		}
		report, err := input.Lab.VerifyFlinkOutput(e.ns, name)
		Expect(err).NotTo(HaveOccurred())
		e.timeline.Mark("stateless upgrade: " + report.String())
		Expect(report.Duplicated).To(BeNumerically(">", 0), "a stateless job starts its sequences again: %s", report)

		events, err := m.Kube().CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		Expect(err).NotTo(HaveOccurred())
		for _, plan := range []string{flinkrunner.PlanFirst, flinkrunner.PlanLastState, flinkrunner.PlanSavepoint, flinkrunner.PlanStateless} {
			Expect(events.Items).To(ContainElement(And(HaveField("Reason", flinkrunner.ReasonSubmit),
				HaveField("Message", ContainSubstring("("+plan+")")))), "a Submit event for the %s", plan)
		}
		summary := fmt.Sprintf("job %s → last-state %s → savepoint %s → stateless %s (duplicated=%d from a fresh start)",
			first.JobID[:8], jobs[flinkrunner.UpgradeLastState].JobID[:8], jobs[flinkrunner.UpgradeSavepoint].JobID[:8],
			jobs[flinkrunner.UpgradeStateless].JobID[:8], report.Duplicated)
		AddReportEntry("flink upgrade modes", summary)
		e.timeline.Title += " — " + summary
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
