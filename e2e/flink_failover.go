//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
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
	labapi "github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/flinkrunner"
)

// jobIDLabel carries the Flink jobId to the destination (the restore webhook's
// default --job-id-key).
const jobIDLabel = "flink.lab.karmada.io/job-id"

// FlinkFailoverSpecInput is the input of FlinkFailoverSpec.
type FlinkFailoverSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	// Trigger: TriggerStopCluster (cluster failover), TriggerTaint (a
	// maintenance drain: a NoExecute taint on a member that keeps running and
	// answering) or TriggerFlinkStarved (application failover: the job stays
	// CREATED without task slots).
	Trigger    Trigger
	Candidates []string
	// StaleUserSavepoint: once the job has checkpointed, the template gets
	// spec.job.initialSavepointPath of one of those (older) checkpoints, as a
	// user who set it once leaves it: the destination must restore from the
	// newer latest checkpoint, not rewind to it.
	StaleUserSavepoint bool
	// Recreate: once the failover is complete (Karmada removed the job id from
	// the destination) and the new job has checkpointed twice more, the
	// FlinkDeployment is deleted on the destination; Karmada re-creates it and
	// it must resume from the new job's latest checkpoint: no rollback to the
	// old job's, no fresh start.
	Recreate bool
	// RestartRunnerOnDestination: once the output is verified, the
	// destination's runner (the operator's stand-in) restarts, as a JobManager
	// pod loss there would: the job must resume from its own latest checkpoint,
	// not from the initialSavepointPath it was first deployed with (the
	// operator reads that field on the first deployment only).
	RestartRunnerOnDestination bool
	// DeletionTime: the FlinkDeployment's deletion takes this long on its
	// member (the operator's finalizer: its job runs on until it is cancelled
	// and the JobManager is gone; the runner's deletion-time annotation). With
	// Directly, Karmada must not start the job elsewhere before then.
	DeletionTime time.Duration
	// SavepointOnDeletion: the operator stops the deleted job with a
	// savepoint (kubernetes.operator.job.savepoint-on-deletion) into the
	// deployment's savepoint directory; with a source that answers (a planned
	// move) the restore must start from it: nothing reprocessed.
	SavepointOnDeletion bool
	// ReplicationLag: the checkpoint store the destination reads is a replica
	// behind the source's. Right after the crash, one state file of the old
	// job's newest completed checkpoint is hidden while its _metadata stays
	// (lab flink replication-lag). Restoring that checkpoint would fail and the
	// job crash-loop: the restore must take the newest restorable one before
	// it and name the one it skipped. The records the skipped checkpoint
	// committed are committed again, and only those. The job writes its state
	// to files (execution.checkpointing.data-inline-threshold 0) and keeps
	// three checkpoints.
	ReplicationLag bool
}

// TriggerFlinkStarved: the member's Flink jobs lose their task slots.
const TriggerFlinkStarved Trigger = "flink-starved"

// FlinkFailoverSpec: a checkpointed Flink job (FlinkDeployment) runs on one
// member with checkpoints on the lab's S3 store; the member (or its job) fails;
// for a crash, the lab fences the member once Karmada sees it NotReady (the
// out-of-service taint, as an operator or a fencing automation would), so the
// purge mode Directly failover completes while the member is still down;
// Karmada moves the FlinkDeployment, carrying the jobId; the restore webhook on
// the destination sets spec.job.initialSavepointPath to the old job's latest
// completed checkpoint. A user observes: Flink's REST API on the destination
// reports the restore from that checkpoint, the checkpoint store has no newer
// completed one of the old job, and the job's committed output (FileSink part
// files, read by lab/flinkverify) holds every sequence exactly once.
func FlinkFailoverSpec(ctx context.Context, inputGetter func() FlinkFailoverSpecInput) {
	var (
		input FlinkFailoverSpecInput
		e     *specEnv
	)
	const name = "sequence"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		skipWithoutFlinkRunner(input.Lab)
		e = newSpecEnv(ctx, "flink", input.E2EConfig, input.Lab, input.ArtifactFolder)
		e.timeline = framework.NewTimeline(fmt.Sprintf("Flink failover by %s (%s)", input.Trigger, e.ns))
	})

	It("resumes the job on the destination from the old job's latest checkpoint with nothing lost", func(ctx SpecContext) {
		k := input.Lab.Karmada
		template, checkpointDir := e.flinkTemplate(name)
		if input.DeletionTime > 0 {
			template.SetAnnotations(map[string]string{flinkrunner.DeletionTimeAnnotation: input.DeletionTime.String()})
		}
		savepointDir := checkpointDir + "-savepoints"
		if input.SavepointOnDeletion {
			for k, v := range map[string]string{flinkrunner.SavepointOnDeletionKey: "true", "state.savepoints.dir": savepointDir} {
				Expect(unstructured.SetNestedField(template.Object, v, "spec", "flinkConfiguration", k)).To(Succeed())
			}
		}
		if input.ReplicationLag {
			for k, v := range map[string]string{"execution.checkpointing.data-inline-threshold": "0", "execution.checkpointing.num-retained": "3"} {
				Expect(unstructured.SetNestedField(template.Object, v, "spec", "flinkConfiguration", k)).To(Succeed())
			}
		}
		if input.StaleUserSavepoint {
			// Keep the checkpoint the template will name, so that the webhook can
			// compare the two completion times.
			Expect(unstructured.SetNestedField(template.Object, "100", "spec", "flinkConfiguration", "state.checkpoints.num-retained")).To(Succeed())
		}
		fds := k.Dynamic().Resource(flink.GVR).Namespace(e.ns)
		e.createFlink(ctx, template, input.Candidates, directlyFailover())

		source, old := e.waitFlinkCheckpointed(ctx, name, 3)
		var stale framework.Checkpoints
		if input.StaleUserSavepoint {
			cp, err := old.REST.Checkpoints(ctx)
			Expect(err).NotTo(HaveOccurred())
			stale = cp
			By("setting the template's spec.job.initialSavepointPath to checkpoint " + stale.LatestCompleted + " (the operator ignores it after the first deployment)")
			patch := fmt.Sprintf(`{"spec":{"job":{"initialSavepointPath":%q}}}`, stale.LatestCompleted)
			_, err = fds.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			Expect(err).NotTo(HaveOccurred())
			framework.WaitForFlinkInitialSavepointPath(ctx, framework.WaitForFlinkInitialSavepointPathInput{
				Lab: input.Lab, Member: source, Namespace: e.ns, Name: name, Path: stale.LatestCompleted,
				REST: old.REST, JobID: old.JobID, MinLatestID: stale.LatestCompletedN + 2, // two checkpoints newer than the template's
			}, e.cfg.GetIntervals(e.name, "wait-flink-running")...)
			e.timeline.Mark("template names stale chk-" + fmt.Sprint(stale.LatestCompletedN))
		}
		e.waitJobIDCollected(ctx, name, source, old.JobID)
		By("checking the job's committed output on " + source + " so far (FileSink part files)")
		framework.WaitForFlinkOutput(ctx, framework.WaitForFlinkOutputInput{Lab: input.Lab, Namespace: e.ns, Name: name, Files: 1, OK: true},
			e.cfg.GetIntervals(e.name, "wait-flink-running")...)
		e.timeline.Mark(fmt.Sprintf("job %s RUNNING on %s, 3 checkpoints", old.JobID[:8], source))

		lastBefore := int64(-1)
		if input.SavepointOnDeletion {
			cp, err := old.REST.Checkpoints(ctx)
			Expect(err).NotTo(HaveOccurred())
			lastBefore = cp.LatestCompletedN
		}
		By(fmt.Sprintf("failing %s by %s", source, input.Trigger))
		injected := time.Now()
		e.timeline.Mark("failure injected on " + source)
		var lag labapi.Lag
		switch input.Trigger {
		case TriggerStopCluster:
			Expect(labapi.Inject(ctx, input.Lab.Provider, labapi.FaultStopCluster, source)).To(Succeed())
			if input.ReplicationLag {
				// The old job is gone: its newest completed checkpoint is final, and
				// Karmada has not seen the member NotReady yet, so no restore has read it.
				Expect(input.Lab.Checkpoints).NotTo(BeNil(), "the lab's checkpoint store")
				var err error
				lag, err = input.Lab.Checkpoints.ReplicationLag(ctx, checkpointDir+"/"+old.JobID)
				Expect(err).NotTo(HaveOccurred())
				By(fmt.Sprintf("replication lag: %s hidden, chk-%d's _metadata kept", lag.File, lag.ID))
				e.timeline.Mark(fmt.Sprintf("replication lag: a state file of chk-%d hidden", lag.ID))
				e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = input.Lab.Checkpoints.CatchUp(ctx, lag) })
			}
			fenced := false
			e.cleanups = append(e.cleanups, func(ctx context.Context) {
				// The fenced member's recovery: back first (Karmada deletes the old copy
				// there), then the taint is removed.
				_ = labapi.Heal(ctx, input.Lab.Provider, labapi.FaultStopCluster, source, labapi.StartOptions{})
				if fenced {
					_ = input.Lab.TaintCluster(ctx, source, framework.OutOfServiceTaintKey, "", true)
				}
			})
			By("fencing " + source + " once Karmada sees it NotReady: the out-of-service taint asserts its job is stopped")
			framework.WaitForClusterNotReady(ctx, framework.WaitForClusterNotReadyInput{Lab: input.Lab, Cluster: source},
				e.cfg.GetIntervals(e.name, "wait-flink-failover")...)
			e.timeline.Mark(source + " NotReady")
			Expect(input.Lab.TaintCluster(ctx, source, framework.OutOfServiceTaintKey, "shutdown", false)).To(Succeed())
			fenced = true
			e.timeline.Mark(source + " out of service")
		case TriggerTaint:
			// A maintenance drain: the member keeps running and answering; Karmada
			// deletes the FlinkDeployment there, whose deletion takes DeletionTime.
			e.taint(ctx, source, "lab.karmada.io/maintenance")
		case TriggerFlinkStarved:
			Expect(input.Lab.Provider.StarveFlink(ctx, source, true)).To(Succeed())
			e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = input.Lab.Provider.StarveFlink(ctx, source, false) })
		default:
			Fail("unsupported fault " + string(input.Trigger))
		}

		By("following the job to the destination")
		dest, arrived, now := e.followFlinkFailover(ctx, name, source)
		decision := arrived[decisionAnnotation]
		restoredPath := arrived["restore.lab.karmada.io/checkpoint"]
		replaced := arrived["restore.lab.karmada.io/replaced-savepoint"]
		skipped := arrived["restore.lab.karmada.io/skipped"]
		wantDecision := "restored"
		if input.StaleUserSavepoint {
			wantDecision = "restored-over-user-savepoint"
			Expect(replaced).To(Equal(stale.LatestCompleted), "the webhook records the template's path it replaced")
			Expect(restoredPath).NotTo(Equal(stale.LatestCompleted), "no rewind to the template's checkpoint")
		}
		Expect(decision).To(Equal(wantDecision), "the restore webhook's decision on %s", dest)
		expectMutatedBy(input.Lab, arrived)
		if input.SavepointOnDeletion {
			Expect(restoredPath).To(HavePrefix(savepointDir+"/savepoint-"+old.JobID[:6]+"-"), "restored from the old job's final savepoint")
		} else {
			Expect(restoredPath).To(HavePrefix(checkpointDir+"/"+old.JobID+"/chk-"), "restored from the old job's checkpoints")
		}
		if input.ReplicationLag {
			Expect(skipped).To(Equal(lag.Checkpoint), "the webhook names the checkpoint it skipped")
			Expect(restoredPath).NotTo(Equal(lag.Checkpoint), "not restored from the checkpoint whose state file is missing")
			expectCheckpointSkippedEvent(ctx, e, input.Lab, dest, name, lag)
		} else {
			Expect(skipped).To(BeEmpty(), "no checkpoint skipped")
		}
		e.timeline.Mark(restoreMode(input.Lab) + ": restore from " + restoredPath[strings.LastIndex(restoredPath, "/")+1:])

		By("checking Flink restored that checkpoint, and that it is the latest the old job completed")
		newREST := now.REST
		var minRestored int64
		if input.StaleUserSavepoint {
			minRestored = stale.LatestCompletedN + 1 // a checkpoint newer than the template's
		}
		restored := framework.WaitForFlinkFirstRecord(ctx, framework.WaitForFlinkFirstRecordInput{
			REST: newREST, RestoredFrom: restoredPath, MinRestoredID: minRestored,
		}, e.cfg.GetIntervals(e.name, "wait-flink-running")...)
		rto := time.Since(injected).Seconds()
		e.timeline.Mark("first record processed on " + dest)

		By("checking the committed output of every run: each sequence exactly once")
		framework.WaitForFlinkCheckpoints(ctx, framework.WaitForFlinkCheckpointsInput{REST: newREST, Where: dest, Completed: 2},
			e.cfg.GetIntervals(e.name, "wait-flink-running")...)
		report, err := input.Lab.VerifyFlinkOutput(e.ns, name)
		Expect(err).NotTo(HaveOccurred())
		e.timeline.Mark("output verified: " + report.String())
		Expect(report.Overlaps()).To(BeEmpty(), "the state was handed over: the old job's writers stopped before the new job's started; writers: %+v (%s)",
			report.Writers, report)
		if input.ReplicationLag {
			// Restored from a checkpoint before the one the old job committed last:
			// the new job commits again what the old one committed after it, and
			// nothing else. The old writer is the first, the new one the last.
			Expect(len(report.Writers)).To(BeNumerically(">=", 2), "writers: %+v", report.Writers)
			was, now := report.Writers[0], report.Writers[len(report.Writers)-1]
			Expect(report.Duplicated).To(Equal(max(0, was.Last-now.First+1)),
				"only the records after the restored checkpoint, up to the old job's last commit, are committed twice (%s; old writer %d..%d, new from %d)",
				report, was.First, was.Last, now.First)
			if report.Duplicated > 0 {
				Expect(report.FirstDuplicated).To(Equal(now.First), "%s", report)
			}
		} else {
			Expect(report.Duplicated).To(BeZero(), "records committed more than once (%s): a restore from an older checkpoint, a fresh start or two writers", report)
		}
		Expect(report.Missing).To(BeZero(), "records never committed (%s)", report)
		if input.Trigger == TriggerStopCluster {
			ready, err := input.Lab.ClusterReady(ctx, source)
			Expect(err).NotTo(HaveOccurred())
			Expect(ready).To(BeFalse(), "the failover completed while %s is still down (fenced, not waited for)", source)
		}

		// The old job is gone (its member stopped, or its FlinkDeployment removed
		// from there): the store's listing is final for its job id.
		Expect(input.Lab.Checkpoints).NotTo(BeNil(), "the lab's checkpoint store")
		latest, err := input.Lab.Checkpoints.LatestCompleted(ctx, checkpointDir, old.JobID)
		Expect(err).NotTo(HaveOccurred())
		latestText := fmt.Sprintf("latest completed: chk-%d", latest)
		if input.SavepointOnDeletion {
			// The savepoint is the job's last snapshot: Flink numbers it after the
			// checkpoints the job completed, and its sink committed everything before
			// it. (Stopped with a savepoint, the job FINISHED: Flink discarded its
			// retained checkpoints, so the savepoint is the only state left.)
			sps, err := input.Lab.Checkpoints.Savepoints(ctx, savepointDir, old.JobID)
			Expect(err).NotTo(HaveOccurred())
			Expect(sps).To(Equal([]string{restoredPath}), "the store holds one savepoint of job %s, the one restored", old.JobID)
			Expect(restored.RestoredID).To(BeNumerically(">", lastBefore), "Flink on %s restored snapshot %d, taken after chk-%d, the old job's latest checkpoint at the drain",
				dest, restored.RestoredID, lastBefore)
			Expect(report.Reprocessed).To(BeZero(), "a planned move reprocesses nothing: the new job starts where the old one stopped (%s)", report)
			latestText = fmt.Sprintf("final savepoint %d, after chk-%d", restored.RestoredID, lastBefore)
		} else if input.ReplicationLag {
			// The store's listing, not the locator's: the lagging checkpoint is the
			// latest completed one, and Flink restored the one completed before it.
			Expect(latest).To(Equal(lag.ID), "the lagging checkpoint is job %s's latest completed one", old.JobID)
			ids, err := input.Lab.Checkpoints.Completed(ctx, checkpointDir, old.JobID)
			Expect(err).NotTo(HaveOccurred())
			before := int64(-1)
			for _, id := range ids {
				if id < lag.ID {
					before = max(before, id)
				}
			}
			Expect(restored.RestoredID).To(Equal(before), "Flink on %s restored chk-%d; job %s's completed checkpoints are %v, chk-%d lagging",
				dest, restored.RestoredID, old.JobID, ids, lag.ID)
			latestText = fmt.Sprintf("chk-%d skipped: a state file not replicated", lag.ID)
		} else {
			Expect(restored.RestoredID).To(Equal(latest), "Flink on %s restored chk-%d; the latest completed checkpoint of job %s in the store is chk-%d",
				dest, restored.RestoredID, old.JobID, latest)
		}

		detected := source + " NotReady"
		switch input.Trigger {
		case TriggerFlinkStarved:
			detected = "FlinkDeployment Unhealthy on " + source
		case TriggerTaint:
			detected = "failure injected on " + source
		}
		t := e.timeline
		Expect(framework.AppendFlinkFailoverRecord(input.ArtifactFolder, framework.FlinkFailoverRecord{
			Scenario: CurrentSpecReport().FullText(), Fault: string(input.Trigger),
			Detection:   t.Since("failure injected on "+source, detected),
			Scheduled:   t.Since(detected, "scheduled to "+dest),
			Applied:     t.Since("scheduled to "+dest, "FlinkDeployment applied on "+dest),
			Running:     t.Since("FlinkDeployment applied on "+dest, "job RUNNING on "+dest),
			FirstRecord: t.Since("job RUNNING on "+dest, "first record processed on "+dest),
			RTO:         rto, RestoredID: restored.RestoredID, LatestID: latest,
			Missing: report.Missing, Duplicated: report.Duplicated, Reprocessed: report.Reprocessed,
		})).To(Succeed())
		summary := fmt.Sprintf("restored from %s (%s) · missing=%d · duplicated=%d · reprocessed=%d · rto=%.0fs · by %s",
			restoredPath, latestText, report.Missing, report.Duplicated, report.Reprocessed, rto, restoreMode(input.Lab))
		AddReportEntry("flink failover", summary)
		fmt.Fprintln(GinkgoWriter, summary)
		e.timeline.Title += " — " + summary

		if input.RestartRunnerOnDestination {
			restartDestinationRunner(ctx, e, input.Lab, name, dest, checkpointDir, restoredPath, newREST)
		}
		if input.Recreate {
			recreateAfterFailover(ctx, e, input.Lab, name, dest, checkpointDir, old.JobID, newREST)
		}
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}

// restartDestinationRunner restarts the runner of dest once the failed-over
// job has checkpointed there, and checks in Flink's REST API that the job
// resumes from its own latest checkpoint, not from initialPath (the
// initialSavepointPath of its first deployment), and that the committed output
// still holds every sequence exactly once.
func restartDestinationRunner(ctx context.Context, e *specEnv, l *framework.Lab, name, dest, checkpointDir, initialPath string, rest framework.FlinkREST) {
	By("restarting the runner on " + dest + " once the job has checkpointed there")
	before, err := rest.Checkpoints(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(before.LatestCompleted).To(HavePrefix(checkpointDir+"/"+rest.JobID+"/chk-"), "the job checkpointed under its own id on %s", dest)
	Expect(labapi.Inject(ctx, l.Provider, labapi.FaultRestartRunner, dest)).To(Succeed())
	Expect(labapi.Heal(ctx, l.Provider, labapi.FaultRestartRunner, dest, labapi.StartOptions{})).To(Succeed())
	e.timeline.Mark("runner restarted on " + dest)

	running := framework.WaitForFlinkRunning(ctx, framework.WaitForFlinkRunningInput{
		Lab: l, Member: dest, Namespace: e.ns, Name: name, Restored: true, Checkpoints: 2,
	}, e.cfg.GetIntervals(e.name, "wait-flink-running")...)
	after, resumed := running.Status, running.Checkpoints
	Expect(after.JobID).To(Equal(rest.JobID), "a recovery keeps the job")
	Expect(resumed.RestoredFrom).To(HavePrefix(checkpointDir+"/"+rest.JobID+"/chk-"), "the job's own checkpoint, not initialSavepointPath %s", initialPath)
	Expect(resumed.RestoredID).To(BeNumerically(">=", before.LatestCompletedN), "its latest completed checkpoint")
	Expect(resumed.LatestCompletedN).To(BeNumerically(">", resumed.RestoredID), "Flink numbers the checkpoints after the one it restored: one sequence per job id")
	e.timeline.Mark("resumed on " + dest + " from " + resumed.RestoredFrom[strings.LastIndex(resumed.RestoredFrom, "/")+1:])
	report, err := l.VerifyFlinkOutput(e.ns, name)
	Expect(err).NotTo(HaveOccurred())
	Expect(report.OK()).To(BeTrue(), "after the runner restart on %s: %s", dest, report)
	Expect(report.Overlaps()).To(BeEmpty())
}

// recreateAfterFailover deletes the failed-over FlinkDeployment on dest once
// the failover is complete and the new job has progressed, and checks that the
// one Karmada re-creates resumes from the new job's latest checkpoint.
func recreateAfterFailover(ctx context.Context, e *specEnv, l *framework.Lab, name, dest, checkpointDir, oldJobID string, newREST framework.FlinkREST) {
	fds := l.Member(dest).Dynamic().Resource(flink.GVR).Namespace(e.ns)
	By("the failover completes: Karmada removes the job id from " + dest + " and keeps the marker")
	framework.WaitForPreservedStateRemoved(ctx, framework.WaitForPreservedStateRemovedInput{
		Getter: l.Member(dest), GVR: flink.GVR, Namespace: e.ns, Name: name, StateKeys: []string{jobIDLabel},
	}, e.cfg.GetIntervals(e.name, "wait-cleanup")...)
	e.timeline.Mark("job id removed from " + dest)

	By("waiting for two more checkpoints of the new job " + newREST.JobID[:8])
	before, err := newREST.Checkpoints(ctx)
	Expect(err).NotTo(HaveOccurred())
	progressed := framework.WaitForFlinkCheckpoints(ctx, framework.WaitForFlinkCheckpointsInput{
		REST: newREST, Where: dest, MinLatestID: before.LatestCompletedN + 2,
	}, e.cfg.GetIntervals(e.name, "wait-flink-running")...)

	By("deleting the FlinkDeployment on " + dest + " (as a user, or a lost member etcd, would)")
	Expect(fds.Delete(ctx, name, metav1.DeleteOptions{})).To(Succeed())
	e.timeline.Mark("FlinkDeployment deleted on " + dest)
	recreated := framework.WaitForFlinkRunning(ctx, framework.WaitForFlinkRunningInput{
		Lab: l, Member: dest, Namespace: e.ns, Name: name, NotJobID: newREST.JobID,
	}, e.cfg.GetIntervals(e.name, "wait-flink-failover")...)
	again, fd := recreated.Status, recreated.FlinkDeployment
	e.timeline.Mark("re-created by Karmada, RUNNING")
	Expect(fd.GetAnnotations()).To(HaveKeyWithValue(decisionAnnotation, "restored-latest-in-directory"))
	path, _, _ := unstructured.NestedString(fd.Object, "spec", "job", "initialSavepointPath")
	Expect(path).To(HavePrefix(checkpointDir+"/"+newREST.JobID+"/chk-"), "the new job's checkpoint, never the old job %s's", oldJobID)

	By("Flink restored a checkpoint at least as new as the new job's latest before the delete")
	restored := e.waitFlinkRestored(ctx, again.REST, path, dest)
	Expect(restored.RestoredID).To(BeNumerically(">=", progressed.LatestCompletedN), "no rollback: restored chk-%d, the new job had completed chk-%d", restored.RestoredID, progressed.LatestCompletedN)
	report, err := l.VerifyFlinkOutput(e.ns, name)
	Expect(err).NotTo(HaveOccurred())
	Expect(report.Duplicated).To(BeZero(), "%s", report)
	Expect(report.Missing).To(BeZero(), "%s", report)
	summary := fmt.Sprintf("re-created on %s: restored %s (new job's latest before: chk-%d) · missing=%d · duplicated=%d",
		dest, path[strings.LastIndex(path, "/")+1:], progressed.LatestCompletedN, report.Missing, report.Duplicated)
	AddReportEntry("flink re-creation after failover", summary)
	fmt.Fprintln(GinkgoWriter, summary)
	e.timeline.Title += " — " + summary
}

// ForgedMarkerSpecInput is the input of ForgedMarkerSpec.
type ForgedMarkerSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	Cluster        string
}

// ForgedMarkerSpec: a user (not Karmada) creates a FlinkDeployment directly in
// a member with Karmada's failover marker and another job's ID, to make the
// restore webhook hand it that job's state. A user observes: the create is
// refused (the webhook never starts a marked job fresh silently) with a
// message naming the identity it honours; with a marker time past the
// webhook's grace it is admitted, with decision ignored-untrusted-marker and no
// initialSavepointPath. Either way nothing of that job is restored.
func ForgedMarkerSpec(ctx context.Context, inputGetter func() ForgedMarkerSpecInput) {
	var (
		input ForgedMarkerSpecInput
		e     *specEnv
	)
	const name = "forged"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		skipWithoutFlinkRunner(input.Lab)
		e = newSpecEnv(ctx, "forged-marker", input.E2EConfig, input.Lab, input.ArtifactFolder)
	})

	It("does not restore another job's state for a marker forged by a user", func(ctx SpecContext) {
		fds := e.flinkInMember(ctx, input.Lab.Member(input.Cluster))
		forged := func(time string) *unstructured.Unstructured {
			fd := framework.NewFlinkDeployment(e.ns, name, "s3://flink-checkpoints/"+e.ns+"/"+name)
			fd.SetLabels(map[string]string{workv1alpha2.FailoverReasonLabel: "ClusterFailure", jobIDLabel: "0123456789abcdef0123456789abcdef"})
			if time != "" {
				fd.SetAnnotations(map[string]string{workv1alpha2.FailoverTimeAnnotation: time})
			}
			return fd
		}
		By("a fresh forged marker: the create is refused")
		_, err := fds.Create(ctx, forged(""), metav1.CreateOptions{})
		Expect(err).To(HaveOccurred())
		if restoreMode(input.Lab) == config.RestoreKyverno {
			// Kyverno denies with the policy's name and /locate's answer.
			Expect(err.Error()).To(And(ContainSubstring("flink-restore-from-latest-checkpoint"), ContainSubstring("HTTP 403")), "Kyverno's policy refused it: /locate answered 403")
		} else {
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want 403 Forbidden, got %v", err)
		}
		Expect(err.Error()).To(ContainSubstring("Karmada"), "the message names the identity the webhook honours")

		By("a forged marker older than the webhook's grace: admitted without state")
		created, err := fds.Create(ctx, forged(metav1.Now().Add(-24*time.Hour).UTC().Format(time.RFC3339)), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = fds.Delete(ctx, name, metav1.DeleteOptions{}) })
		Expect(created.GetAnnotations()).To(HaveKeyWithValue(decisionAnnotation, "ignored-untrusted-marker"))
		expectMutatedBy(input.Lab, created.GetAnnotations())
		path, _, _ := unstructured.NestedString(created.Object, "spec", "job", "initialSavepointPath")
		Expect(path).To(BeEmpty())
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}

// expectCheckpointSkippedEvent: the restore on dest records, as a Warning
// Event on the FlinkDeployment, which checkpoint it skipped and the state file
// missing from it.
func expectCheckpointSkippedEvent(ctx context.Context, e *specEnv, l *framework.Lab, dest, name string, lag labapi.Lag) {
	framework.WaitForEvent(ctx, framework.WaitForEventInput{
		Getter: l.Member(dest), Namespace: e.ns, InvolvedName: name,
		Type: "Warning", Reason: "CheckpointNotRestorable", MessageContains: []string{lag.File},
	}, e.cfg.GetIntervals(e.name, "wait-flink-running")...)
}
