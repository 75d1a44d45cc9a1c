//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	"github.com/karmada-failover/lab/apis/flink"
	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
	labapi "github.com/karmada-failover/lab/lab"
)

// FlinkPartitionSpecInput is the input of FlinkPartitionSpec.
type FlinkPartitionSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	Candidates     []string
	// PurgeMode of the cluster failover: Directly (the old copy must be gone
	// before the new one starts) or Gracefully (upstream starts the new copy
	// first: two writers while the old member is partitioned).
	PurgeMode policyv1alpha1.PurgeMode
	// Fault cuts Karmada off the source: labapi.FaultPartition (the member
	// and its job keep running; the default) or labapi.FaultStopCluster (the
	// member crashes, SIGKILL, and comes back at the "heal"; Directly only:
	// Gracefully after a crash is the "Flink cluster failover: the member
	// crashes" scenario).
	Fault labapi.Fault
}

// FlinkPartitionSpec: Karmada loses the network to the member that runs a
// checkpointed Flink job, and the member keeps running: its job goes on
// processing, checkpointing and committing output (or, with FaultStopCluster,
// the member crashes and comes back later: its runner resumes the old job from
// its last state until Karmada removes it). A user observes the Cluster become
// NotReady and tainted, then, by purge mode:
//
//   - Directly (the old copy is gone before the new one starts): for longer
//     than the toleration no FlinkDeployment appears on another member while
//     the old job keeps committing (never two writers); after the heal Karmada
//     removes the old FlinkDeployment, its job stops, the job moves, and the
//     destination restores the old job's latest completed checkpoint, with
//     every sequence committed exactly once and the writers' windows in the
//     committed output one after the other.
//   - Gracefully (upstream starts the new copy before the old one is removed):
//     the job starts on the destination while the old one still runs, and the
//     committed output shows both writing the same sequence numbers
//     (duplicated > 0) and overlapping writers' windows. This is what purge mode
//     Gracefully allows. Karmada withholds the old job's state (the old copy is
//     not confirmed stopped): the destination gets the failover marker without
//     the jobId (with failover.karmada.io/state-withheld), the binding a
//     PreservedStateWithheld Warning naming the rule, and the restore webhook
//     admits the job without state once its grace is over (decision
//     state-withheld), so nothing is restored from a checkpoint the
//     still-running old job goes on retiring.
func FlinkPartitionSpec(ctx context.Context, inputGetter func() FlinkPartitionSpecInput) {
	var (
		input FlinkPartitionSpecInput
		e     *specEnv
	)
	const name = "partitioned"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		skipWithoutFlinkRunner(input.Lab)
		if input.Fault == "" {
			input.Fault = labapi.FaultPartition
		}
		skipUnsupported(input.Lab, input.Fault)
		Expect(input.Candidates).To(HaveLen(2), "Invalid argument. Candidates must name the source's and the destination's candidates")
		e = newSpecEnv(ctx, "flink-partition", input.E2EConfig, input.Lab, input.ArtifactFolder)
		Expect(input.PurgeMode).To(BeElementOf(policyv1alpha1.PurgeModeDirectly, policyv1alpha1.PurgeModeGracefully), "Invalid argument. PurgeMode")
		Expect(input.Fault).To(BeElementOf(labapi.FaultPartition, labapi.FaultStopCluster), "Invalid argument. Fault")
		if input.Fault == labapi.FaultStopCluster {
			Expect(input.PurgeMode).To(Equal(policyv1alpha1.PurgeModeDirectly), "Invalid argument. A crash with Gracefully is FlinkFailoverSpec")
		}
		e.timeline = framework.NewTimeline(fmt.Sprintf("Flink failover by %s, purge mode %s (%s)", input.Fault, input.PurgeMode, e.ns))
	})

	It("keeps the purge mode's promise about a second job while the member is cut off, and ends with one job once it is back", func(ctx SpecContext) {
		k := input.Lab.Karmada
		template, checkpointDir := e.flinkTemplate(name)
		if input.PurgeMode == policyv1alpha1.PurgeModeGracefully {
			// The partitioned job goes on checkpointing and, keeping 3 checkpoints
			// at 2 s, deletes the one the destination is told to restore within
			// about 6 s: the new job then fails with "Cannot find checkpoint or
			// savepoint" (observed on a loaded machine). Retaining more keeps the
			// scenario about what it shows: two jobs writing at once.
			Expect(unstructured.SetNestedField(template.Object, "100", "spec", "flinkConfiguration", "state.checkpoints.num-retained")).To(Succeed())
		}
		e.createFlink(ctx, template, input.Candidates, &policyv1alpha1.FailoverBehavior{
			Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: input.PurgeMode, StatePreservation: jobIDState("{.jobStatus.jobId}")},
		})

		source, old := e.waitFlinkCheckpointed(ctx, name, 3)
		By("waiting for Karmada to collect the job's status from " + source + " (the jobId it will preserve)")
		framework.WaitForBindingStatus(ctx, framework.WaitForBindingStatusInput{
			Karmada: k, Namespace: e.ns, Name: name, Kind: "FlinkDeployment", Cluster: source, Contains: old.JobID,
		}, e.cfg.GetIntervals(e.name, "wait-flink-running")...)
		dest := input.Candidates[0]
		if dest == source {
			dest = input.Candidates[1]
		}
		oldREST := old.REST
		e.timeline.Mark(fmt.Sprintf("job %s RUNNING on %s", old.JobID[:8], source))

		crash := input.Fault == labapi.FaultStopCluster
		heal := func(ctx context.Context) error {
			if crash {
				return labapi.Heal(ctx, input.Lab.Provider, labapi.FaultStopCluster, source, labapi.StartOptions{})
			}
			return input.Lab.Provider.Partition(ctx, source, true)
		}
		if crash {
			By("crashing " + source + " (SIGKILL: no grace, no final checkpoint)")
			Expect(labapi.Inject(ctx, input.Lab.Provider, labapi.FaultStopCluster, source)).To(Succeed())
		} else {
			By("partitioning " + source + " from Karmada: the member and its job keep running")
			Expect(input.Lab.Provider.Partition(ctx, source, false)).To(Succeed())
		}
		healed := false
		e.cleanups = append(e.cleanups, func(ctx context.Context) {
			if !healed {
				_ = heal(ctx)
			}
		})
		partitioned := time.Now()
		e.timeline.Mark(source + " " + map[bool]string{true: "crashed", false: "partitioned"}[crash])
		framework.WaitForClusterNotReady(ctx, framework.WaitForClusterNotReadyInput{Lab: input.Lab, Cluster: source, TaintKey: framework.NotReadyTaintKey},
			e.cfg.GetIntervals(e.name, "wait-cluster-ready")...)
		e.timeline.Mark(fmt.Sprintf("%s NotReady and tainted (%.0fs)", source, time.Since(partitioned).Seconds()))

		if input.PurgeMode == policyv1alpha1.PurgeModeGracefully {
			gracefullyTwoWriters(ctx, e, input.Lab, name, source, dest, oldREST)
		} else {
			By("watching that no second job starts while Karmada cannot confirm the old one is gone from " + source + ", past the toleration")
			var before framework.Checkpoints
			if !crash {
				// The partitioned member's job answers on its own network.
				before = framework.WaitForFlinkCheckpoints(ctx, framework.WaitForFlinkCheckpointsInput{REST: oldREST, Where: source},
					e.cfg.GetIntervals(e.name, "wait-flink-running")...)
			}
			e.consistently(ctx, func(g Gomega, ctx context.Context) {
				_, err := input.Lab.Member(dest).Dynamic().Resource(flink.GVR).Namespace(e.ns).Get(ctx, name, metav1.GetOptions{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a FlinkDeployment on %s while the old job may still run on %s (err %v)", dest, source, err)
			}).Should(Succeed())
			if !crash {
				// The job on source kept checkpointing during the partition.
				framework.WaitForFlinkCheckpoints(ctx, framework.WaitForFlinkCheckpointsInput{
					REST: oldREST, Where: source, MinLatestID: before.LatestCompletedN + 1,
				}, e.cfg.GetIntervals(e.name, "wait-flink-running")...)
			}
			report, err := input.Lab.VerifyFlinkOutput(e.ns, name)
			Expect(err).NotTo(HaveOccurred())
			Expect(report.OK()).To(BeTrue(), "one writer while %s is cut off: %s", source, report)
			e.timeline.Mark(fmt.Sprintf("no second job; committed up to %d meanwhile", report.Max))
		}

		if crash {
			By("starting " + source + " again: its runner resumes the old job from its last state until Karmada removes it")
		} else {
			By("healing the partition")
		}
		Expect(heal(ctx)).To(Succeed())
		healed = true
		e.timeline.Mark(source + " back")

		By("Karmada removes the old FlinkDeployment, its job stops, and the job moves to " + dest)
		moved := framework.WaitForFlinkRunning(ctx, framework.WaitForFlinkRunningInput{
			Lab: input.Lab, GoneFrom: source, Member: dest, Namespace: e.ns, Name: name,
		}, e.cfg.GetIntervals(e.name, "wait-flink-failover")...)
		now, restoredPath := moved.Status, moved.FlinkDeployment.GetAnnotations()["restore.lab.karmada.io/checkpoint"]
		e.timeline.Mark("job RUNNING on " + dest)
		_, err := oldREST.Checkpoints(ctx)
		Expect(err).To(HaveOccurred(), "the old job's REST endpoint on %s is gone", source)
		if input.PurgeMode == policyv1alpha1.PurgeModeGracefully {
			Expect(restoredPath).To(BeEmpty(), "the old job's state was withheld: nothing restored")
		} else {
			Expect(restoredPath).To(HavePrefix(checkpointDir+"/"+old.JobID+"/chk-"), "restored from the old job's checkpoints")
		}

		By("checking the restore and the committed output of both jobs")
		newREST := now.REST
		restored := e.waitFlinkRestored(ctx, newREST, restoredPath, dest)
		report, err := input.Lab.VerifyFlinkOutput(e.ns, name)
		Expect(err).NotTo(HaveOccurred())
		e.timeline.Mark("output verified: " + report.String())
		if input.PurgeMode == policyv1alpha1.PurgeModeGracefully {
			Expect(report.Duplicated).To(BeNumerically(">", 0), "two writers commit the same records: %s", report)
			summary := fmt.Sprintf("partitioned, purge mode Gracefully: state withheld, two jobs ran at once · missing=%d · duplicated=%d (from %d)",
				report.Missing, report.Duplicated, report.FirstDuplicated)
			AddReportEntry("flink failover across a partition", summary)
			e.timeline.Title += " — " + summary
			Expect(report.Overlaps()).NotTo(BeEmpty(), "the writers' windows overlap: %+v", report.Writers)
			return
		}
		Expect(report.Duplicated).To(BeZero(), "records committed more than once: %s", report)
		Expect(report.Missing).To(BeZero(), "records never committed: %s", report)
		Expect(report.Overlaps()).To(BeEmpty(), "never two writers: each writer's window in the committed output ends before the next one's starts")
		Expect(len(report.Writers)).To(BeNumerically(">=", 2), "the old and the new job committed output: %+v", report.Writers)
		latest, err := input.Lab.Checkpoints.LatestCompleted(ctx, checkpointDir, old.JobID)
		Expect(err).NotTo(HaveOccurred())
		Expect(restored.RestoredID).To(Equal(latest), "the latest completed checkpoint of job %s in the store", old.JobID)
		summary := fmt.Sprintf("%s %.0fs, no second job meanwhile; restored from %s (latest completed: chk-%d) · missing=%d · duplicated=%d · reprocessed=%d · writers=%d, none overlapping",
			input.Fault, time.Since(partitioned).Seconds(), restoredPath, latest, report.Missing, report.Duplicated, report.Reprocessed, len(report.Writers))
		AddReportEntry("flink failover across a partition", summary)
		fmt.Fprintln(GinkgoWriter, summary)
		e.timeline.Title += " — " + summary
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}

// gracefullyTwoWriters: with purge mode Gracefully the job starts on dest while
// the one on the partitioned source still runs and commits.
func gracefullyTwoWriters(ctx context.Context, e *specEnv, l *framework.Lab, name, source, dest string, oldREST framework.FlinkREST) {
	By("purge mode Gracefully: the job starts on " + dest + " while the one on " + source + " still runs")
	// The job on dest commits output.
	framework.WaitForFlinkRunning(ctx, framework.WaitForFlinkRunningInput{Lab: l, Member: dest, Namespace: e.ns, Name: name, Checkpoints: 2},
		e.cfg.GetIntervals(e.name, "wait-flink-failover")...)
	_, err := oldREST.Checkpoints(ctx)
	Expect(err).NotTo(HaveOccurred(), "the job on %s still runs: two writers", source)
	e.timeline.Mark("two jobs RUNNING: " + source + " and " + dest)

	By("Karmada withheld the old job's state from " + dest + ": the marker without the jobId, and a Warning on the binding")
	fd, err := l.Member(dest).Dynamic().Resource(flink.GVR).Namespace(e.ns).Get(ctx, name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(fd.GetLabels()).To(HaveKeyWithValue(workv1alpha2.FailoverReasonLabel, "ClusterFailure"), "the failover marker on %s", dest)
	Expect(fd.GetLabels()).NotTo(HaveKey(jobIDLabel), "no jobId while the old job may still run")
	Expect(fd.GetAnnotations()).NotTo(HaveKey(jobIDLabel))
	Expect(fd.GetAnnotations()).NotTo(HaveKey(workv1alpha2.FailoverPreservedKeysAnnotation))
	// Karmada created it with failover.karmada.io/state-withheld (removed once the
	// eviction task is retired): the webhook restored nothing, by job id or otherwise.
	Expect(fd.GetAnnotations()).To(HaveKeyWithValue(decisionAnnotation, "state-withheld"), "the restore webhook on %s admitted it without state", dest)
	evs, err := l.Karmada.Kube().CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var withheld string
	for _, ev := range evs.Items {
		if ev.Reason == "PreservedStateWithheld" && ev.Type == corev1.EventTypeWarning && ev.InvolvedObject.Kind == "ResourceBinding" {
			withheld = ev.Message
		}
	}
	Expect(withheld).To(ContainSubstring("purge mode Gracefully"), "a PreservedStateWithheld Warning on the binding naming the purge mode")
	Expect(withheld).To(ContainSubstring(framework.OutOfServiceTaintKey), "the Warning names the rule")
	e.timeline.Mark("state withheld: marker without jobId on " + dest)
	framework.WaitForFlinkOutput(ctx, framework.WaitForFlinkOutputInput{Lab: l, Namespace: e.ns, Name: name, Duplicated: true},
		e.cfg.GetIntervals(e.name, "wait-flink-running")...)
}
