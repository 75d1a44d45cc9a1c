package framework

// The Flink scenarios' waits (see wait.go for the style): a FlinkDeployment running on a
// member, a job restored or checkpointing, as Flink's REST API reports it, and the job's
// committed output.

import (
	"context"
	"strings"

	. "github.com/onsi/gomega"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karmada-failover/lab/apis/flink"
	"github.com/karmada-failover/lab/lab/flinkrunner"
	"github.com/karmada-failover/lab/lab/flinkverify"
)

// WaitForFlinkRunningInput is the input of WaitForFlinkRunning.
type WaitForFlinkRunningInput struct {
	Lab             *Lab
	Namespace, Name string
	// Member is the member the FlinkDeployment runs on; "": the one cluster its binding is
	// scheduled to.
	Member string
	// Scheduled: the binding is scheduled to Member alone (a failover's destination).
	Scheduled bool
	// GoneFrom, when set, is a member the FlinkDeployment is gone from (a failover's source).
	GoneFrom string
	// JobID, when set, is the job's id (a recovery keeps it); NotJobID, when set, an id the job
	// no longer has (a redeploy, a re-creation).
	JobID, NotJobID string
	// Reconciled: the runner observed the FlinkDeployment's latest generation.
	Reconciled bool
	// Stable: the status of a settled deployment: lifecycleState STABLE,
	// jobManagerDeploymentStatus READY.
	Stable bool
	// Checkpoints is the least number of checkpoints the job completed (Flink's REST API).
	Checkpoints int
	// Restored: Flink reports a restore; RestoredFromPrefix, when set, from a path with this prefix.
	Restored           bool
	RestoredFromPrefix string
	// CheckpointsSinceRestore: the latest completed checkpoint is at least this many after the
	// restored one (a recovered job counts from its restore on).
	CheckpointsSinceRestore int64
	// OutputFiles is the least number of part files the job committed (Lab.VerifyFlinkOutput).
	OutputFiles int
}

// FlinkRunning is what WaitForFlinkRunning observed.
type FlinkRunning struct {
	// Member runs the job.
	Member          string
	FlinkDeployment *unstructured.Unstructured
	Status          FlinkJobStatus
	// Checkpoints are the job's checkpoint statistics, when the input asked Flink's REST API.
	Checkpoints Checkpoints
}

// WaitForFlinkRunning waits until the FlinkDeployment runs on its member, its job RUNNING as
// `kubectl get flinkdeployments` and Flink's REST API show it, as the input describes it, and
// returns what it observed.
func WaitForFlinkRunning(ctx context.Context, input WaitForFlinkRunningInput, intervals ...interface{}) FlinkRunning {
	var r FlinkRunning
	askFlink := input.Checkpoints > 0 || input.Restored || input.RestoredFromPrefix != "" || input.CheckpointsSinceRestore > 0
	Eventually(func(g Gomega, ctx context.Context) {
		r = FlinkRunning{Member: input.Member}
		if r.Member == "" || input.Scheduled {
			rb, err := GetBinding(ctx, input.Lab.Karmada, input.Namespace, BindingName(input.Name, flink.Kind))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rb.Spec.Clusters).To(HaveLen(1))
			if r.Member == "" {
				r.Member = rb.Spec.Clusters[0].Name
			} else {
				g.Expect(rb.Spec.Clusters[0].Name).To(Equal(r.Member))
			}
		}
		if input.GoneFrom != "" {
			_, err := input.Lab.Member(input.GoneFrom).Dynamic().Resource(flink.GVR).Namespace(input.Namespace).Get(ctx, input.Name, metav1.GetOptions{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the old FlinkDeployment is removed from %s", input.GoneFrom)
		}
		fd, err := input.Lab.Member(r.Member).Dynamic().Resource(flink.GVR).Namespace(input.Namespace).Get(ctx, input.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		r.FlinkDeployment = fd
		if input.Reconciled {
			g.Expect(fd.Object["status"]).To(HaveKeyWithValue("observedGeneration", fd.GetGeneration()))
		}
		r.Status = input.Lab.ReadFlinkStatus(r.Member, fd)
		g.Expect(r.Status.State).To(Equal(flinkrunner.JobRunning))
		if input.Stable {
			g.Expect(r.Status.Lifecycle).To(Equal(flinkrunner.LifecycleStable))
			g.Expect(fd.Object["status"]).To(HaveKeyWithValue("jobManagerDeploymentStatus", flinkrunner.JMReady))
		}
		if input.JobID != "" {
			g.Expect(r.Status.JobID).To(Equal(input.JobID))
		}
		if input.NotJobID != "" {
			g.Expect(r.Status.JobID).NotTo(Equal(input.NotJobID), "a new incarnation")
		}
		if askFlink {
			g.Expect(r.Status.JobID).NotTo(BeEmpty())
			r.Checkpoints, err = r.Status.REST.Checkpoints(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			if input.Restored {
				g.Expect(r.Checkpoints.RestoredFrom).NotTo(BeEmpty(), "Flink restored a checkpoint")
			}
			if input.RestoredFromPrefix != "" {
				g.Expect(r.Checkpoints.RestoredFrom).To(HavePrefix(input.RestoredFromPrefix), "Flink restored the job's own checkpoint")
			}
			g.Expect(r.Checkpoints.Completed).To(BeNumerically(">=", input.Checkpoints), "checkpoints of the job on %s commit its output", r.Member)
			if input.CheckpointsSinceRestore > 0 {
				g.Expect(r.Checkpoints.LatestCompletedN).To(BeNumerically(">=", r.Checkpoints.RestoredID+input.CheckpointsSinceRestore))
			}
		}
		if input.OutputFiles > 0 {
			report, err := input.Lab.VerifyFlinkOutput(input.Namespace, input.Name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(report.Files).To(BeNumerically(">=", input.OutputFiles), "committed output")
		}
	}, intervals...).WithContext(ctx).Should(Succeed(), "FlinkDeployment %s/%s RUNNING on %q", input.Namespace, input.Name, input.Member)
	return r
}

// WaitForFlinkReportedInput is the input of WaitForFlinkReported.
type WaitForFlinkReportedInput struct {
	Lab             *Lab
	Namespace, Name string
	// Member is where the binding is scheduled to.
	Member string
}

// WaitForFlinkReported waits until the FlinkDeployment's binding is scheduled to Member alone
// and the member's runner reports the job there, in whatever state, and returns its status.
func WaitForFlinkReported(ctx context.Context, input WaitForFlinkReportedInput, intervals ...interface{}) FlinkJobStatus {
	var st FlinkJobStatus
	Eventually(func(g Gomega, ctx context.Context) {
		rb, err := GetBinding(ctx, input.Lab.Karmada, input.Namespace, BindingName(input.Name, flink.Kind))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(rb.Spec.Clusters).To(HaveLen(1))
		g.Expect(rb.Spec.Clusters[0].Name).To(Equal(input.Member))
		fd, err := input.Lab.Member(input.Member).Dynamic().Resource(flink.GVR).Namespace(input.Namespace).Get(ctx, input.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		st = input.Lab.ReadFlinkStatus(input.Member, fd)
		g.Expect(st.State).NotTo(BeEmpty(), "the runner on %s reports the job", input.Member)
	}, intervals...).WithContext(ctx).Should(Succeed(), "FlinkDeployment %s/%s scheduled to %s and reported there", input.Namespace, input.Name, input.Member)
	return st
}

// FlinkHolders lists the candidates that hold FlinkDeployment namespace/name; a member that
// does not answer is listed with a question mark.
func FlinkHolders(ctx context.Context, l *Lab, candidates []string, namespace, name string) []string {
	var on []string
	for _, m := range candidates {
		_, err := l.Member(m).Dynamic().Resource(flink.GVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			on = append(on, m)
		} else if !apierrors.IsNotFound(err) {
			on = append(on, m+"?")
		}
	}
	return on
}

// WaitForFlinkOnOneMemberInput is the input of WaitForFlinkOnOneMember.
type WaitForFlinkOnOneMemberInput struct {
	Lab             *Lab
	Namespace, Name string
	Candidates      []string
	// Checkpoints is the least number of checkpoints the job completed there.
	Checkpoints int
}

// WaitForFlinkOnOneMember waits until exactly one of the candidates holds the FlinkDeployment
// (FlinkHolders), its job RUNNING with Checkpoints completed, and returns that member.
func WaitForFlinkOnOneMember(ctx context.Context, input WaitForFlinkOnOneMemberInput, intervals ...interface{}) string {
	var where string
	Eventually(func(g Gomega, ctx context.Context) {
		on := FlinkHolders(ctx, input.Lab, input.Candidates, input.Namespace, input.Name)
		g.Expect(on).To(HaveLen(1))
		where = on[0]
		fd, err := input.Lab.Member(where).Dynamic().Resource(flink.GVR).Namespace(input.Namespace).Get(ctx, input.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		st := input.Lab.ReadFlinkStatus(where, fd)
		g.Expect(st.State).To(Equal(flinkrunner.JobRunning))
		cp, err := st.REST.Checkpoints(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cp.Completed).To(BeNumerically(">=", input.Checkpoints))
	}, intervals...).WithContext(ctx).Should(Succeed(), "FlinkDeployment %s/%s on one of %v, RUNNING", input.Namespace, input.Name, input.Candidates)
	return where
}

// WaitForFlinkInitialSavepointPathInput is the input of WaitForFlinkInitialSavepointPath.
type WaitForFlinkInitialSavepointPathInput struct {
	Lab             *Lab
	Member          string
	Namespace, Name string
	// Path is the template's spec.job.initialSavepointPath.
	Path string
	// REST is the running job's Flink REST API; its id stays JobID (no redeploy).
	REST  FlinkREST
	JobID string
	// MinLatestID is the least id of the job's latest completed checkpoint.
	MinLatestID int64
}

// WaitForFlinkInitialSavepointPath waits until Karmada applied the template's
// spec.job.initialSavepointPath to the FlinkDeployment on Member while its job kept running (the
// operator reads it on the first deployment only) and checkpointed up to MinLatestID.
func WaitForFlinkInitialSavepointPath(ctx context.Context, input WaitForFlinkInitialSavepointPathInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		cp, err := input.REST.Checkpoints(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cp.LatestCompletedN).To(BeNumerically(">=", input.MinLatestID), "checkpoints newer than the template's")
		fd, err := input.Lab.Member(input.Member).Dynamic().Resource(flink.GVR).Namespace(input.Namespace).Get(ctx, input.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		path, _, _ := unstructured.NestedString(fd.Object, "spec", "job", "initialSavepointPath")
		g.Expect(path).To(Equal(input.Path), "Karmada applied the template change to %s", input.Member)
		g.Expect(ReadFlinkStatus(fd).JobID).To(Equal(input.JobID), "the job on %s kept running (no redeploy)", input.Member)
	}, intervals...).WithContext(ctx).Should(Succeed(), "initialSavepointPath %s on FlinkDeployment %s/%s in %s", input.Path, input.Namespace, input.Name, input.Member)
}

// WaitForFlinkCheckpointsInput is the input of WaitForFlinkCheckpoints.
type WaitForFlinkCheckpointsInput struct {
	// REST is the job's Flink REST API.
	REST FlinkREST
	// Where the job runs, for the failure message.
	Where string
	// Completed is the least number of checkpoints the job completed.
	Completed int
	// MinLatestID is the least id of its latest completed checkpoint.
	MinLatestID int64
}

// WaitForFlinkCheckpoints waits until Flink's REST API of the job answers with the checkpoints
// the input asks for, and returns them.
func WaitForFlinkCheckpoints(ctx context.Context, input WaitForFlinkCheckpointsInput, intervals ...interface{}) Checkpoints {
	var cp Checkpoints
	Eventually(func(g Gomega, ctx context.Context) {
		var err error
		cp, err = input.REST.Checkpoints(ctx)
		g.Expect(err).NotTo(HaveOccurred(), "the job on %s answers", input.Where)
		g.Expect(cp.Completed).To(BeNumerically(">=", input.Completed), "checkpoints of the job on %s commit its output", input.Where)
		g.Expect(cp.LatestCompletedN).To(BeNumerically(">=", input.MinLatestID), "the job on %s kept checkpointing", input.Where)
	}, intervals...).WithContext(ctx).Should(Succeed(), "checkpoints of job %s on %s", input.REST.JobID, input.Where)
	return cp
}

// WaitForFlinkRestoredInput is the input of WaitForFlinkRestored.
type WaitForFlinkRestoredInput struct {
	// REST is the job's Flink REST API.
	REST FlinkREST
	// RestoredFrom is the path the job restored; "": no restore at all.
	RestoredFrom string
	// Where the job runs, for the failure message.
	Where string
}

// WaitForFlinkRestored waits until the job reports, in Flink's REST API, the restore from
// RestoredFrom (or none) and at least two completed checkpoints of its own (so its output is
// committed), and returns its checkpoint statistics.
func WaitForFlinkRestored(ctx context.Context, input WaitForFlinkRestoredInput, intervals ...interface{}) Checkpoints {
	var restored Checkpoints
	Eventually(func(g Gomega, ctx context.Context) {
		var err error
		restored, err = input.REST.Checkpoints(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		if input.RestoredFrom != "" {
			g.Expect(strings.TrimSuffix(restored.RestoredFrom, "/")).To(Equal(strings.TrimSuffix(input.RestoredFrom, "/")))
		} else {
			g.Expect(restored.RestoredFrom).To(BeEmpty(), "Flink restored nothing on %s", input.Where)
		}
		g.Expect(restored.Completed).To(BeNumerically(">=", 2), "two checkpoints of the job on %s commit its output", input.Where)
	}, intervals...).WithContext(ctx).Should(Succeed(), "job %s on %s restored from %q", input.REST.JobID, input.Where, input.RestoredFrom)
	return restored
}

// WaitForFlinkFirstRecordInput is the input of WaitForFlinkFirstRecord.
type WaitForFlinkFirstRecordInput struct {
	// REST is the job's Flink REST API.
	REST FlinkREST
	// RestoredFrom is the path the job restored.
	RestoredFrom string
	// MinRestoredID is the least id of the checkpoint it restored.
	MinRestoredID int64
}

// WaitForFlinkFirstRecord waits until the job reports, in Flink's REST API, the restore from
// RestoredFrom and its first record processed after it, and returns its checkpoint statistics.
func WaitForFlinkFirstRecord(ctx context.Context, input WaitForFlinkFirstRecordInput, intervals ...interface{}) Checkpoints {
	var restored Checkpoints
	Eventually(func(g Gomega, ctx context.Context) {
		var err error
		restored, err = input.REST.Checkpoints(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(strings.TrimSuffix(restored.RestoredFrom, "/")).To(Equal(strings.TrimSuffix(input.RestoredFrom, "/")))
		g.Expect(restored.RestoredID).To(BeNumerically(">=", input.MinRestoredID), "Flink restored a checkpoint newer than the template's")
		m, err := input.REST.SequenceMetrics(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(m.FirstSequenceAfterRestore).To(BeNumerically(">=", 0), "no record processed yet")
	}, intervals...).WithContext(ctx).Should(Succeed(), "job %s restored from %s and processing", input.REST.JobID, input.RestoredFrom)
	return restored
}

// WaitForFlinkJobGoneInput is the input of WaitForFlinkJobGone.
type WaitForFlinkJobGoneInput struct {
	// REST is the job's Flink REST API.
	REST FlinkREST
}

// WaitForFlinkJobGone waits until Flink's REST API of the job no longer answers: the job stopped.
func WaitForFlinkJobGone(ctx context.Context, input WaitForFlinkJobGoneInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		_, err := input.REST.Checkpoints(ctx)
		g.Expect(err).To(HaveOccurred(), "Flink's REST API answers after the delete")
	}, intervals...).WithContext(ctx).Should(Succeed(), "job %s stopped", input.REST.JobID)
}

// WaitForFlinkOutputInput is the input of WaitForFlinkOutput.
type WaitForFlinkOutputInput struct {
	Lab             *Lab
	Namespace, Name string
	// Files is the least number of committed part files.
	Files int
	// Committed: some record is committed; OK: none is missing or committed twice; Duplicated:
	// some record is committed twice (two writers, a fresh start).
	Committed, OK, Duplicated bool
}

// WaitForFlinkOutput waits until the job's committed output (its FileSink's part files, read by
// lab/flinkverify) is as the input describes it, and returns the report.
func WaitForFlinkOutput(ctx context.Context, input WaitForFlinkOutputInput, intervals ...interface{}) flinkverify.Report {
	var r flinkverify.Report
	Eventually(func(g Gomega, ctx context.Context) {
		var err error
		r, err = input.Lab.VerifyFlinkOutput(input.Namespace, input.Name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(r.Files).To(BeNumerically(">=", input.Files), "committed part files")
		if input.Committed {
			g.Expect(r.Max).To(BeNumerically(">=", 0), "committed output of the job")
		}
		if input.OK {
			g.Expect(r.OK()).To(BeTrue(), "committed output: %s", r)
		}
		if input.Duplicated {
			g.Expect(r.Duplicated).To(BeNumerically(">", 0), "both jobs commit the same sequence numbers: %s", r)
		}
	}, intervals...).WithContext(ctx).Should(Succeed(), "the committed output of FlinkDeployment %s/%s", input.Namespace, input.Name)
	return r
}

// WaitForFlinkRejectedInput is the input of WaitForFlinkRejected.
type WaitForFlinkRejectedInput struct {
	// Getter is the member the FlinkDeployment was created in.
	Getter          *ClusterProxy
	Namespace, Name string
	// Error is what the runner says it cannot run.
	Error string
}

// WaitForFlinkRejected waits until the member's runner refuses the FlinkDeployment as the
// operator does: status.error saying why, nothing deployed (jobManagerDeploymentStatus MISSING,
// no job), and a ValidationError Warning event saying the same.
func WaitForFlinkRejected(ctx context.Context, input WaitForFlinkRejectedInput, intervals ...interface{}) {
	Eventually(func(g Gomega, ctx context.Context) {
		got, err := input.Getter.Dynamic().Resource(flink.GVR).Namespace(input.Namespace).Get(ctx, input.Name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		msg, _, _ := unstructured.NestedString(got.Object, "status", "error")
		g.Expect(msg).To(ContainSubstring(input.Error))
		g.Expect(got.Object["status"]).To(HaveKeyWithValue("jobManagerDeploymentStatus", flinkrunner.JMMissing), "nothing deployed")
		g.Expect(ReadFlinkStatus(got).JobID).To(BeEmpty(), "no job")
		events, err := input.Getter.Kube().CoreV1().Events(input.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + input.Name})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(events.Items).To(ContainElement(And(
			HaveField("Type", "Warning"), HaveField("Reason", flinkrunner.ReasonValidationError),
			HaveField("Message", ContainSubstring(input.Error)))))
	}, intervals...).WithContext(ctx).Should(Succeed(), "FlinkDeployment %s/%s refused on %s", input.Namespace, input.Name, input.Getter.Name)
}
