package webhook

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karmada-failover/lab/apis/flink"
	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/restore/checkpoint"
)

// The restore decision is a pure function of its inputs (Config.decide): the
// request (operation, namespace, requester, the object and the object before an
// UPDATE), the time, the policy (Config) and what the checkpoint store answered.
// It asks the store one question at a time (decision.need); /mutate and /locate
// answer it and decide again (Handler.decide), then render the decision: a JSON
// patch or a denial for the API server, a LocateDecision for Kyverno. The same
// inputs always give the same decision, logs and Events included, so the
// decision is table-tested without a store or a server.

// queryKind is a question to the checkpoint store (checkpoint.Locator).
type queryKind int

const (
	queryLatest      queryKind = iota // LatestCompleted(dir, job)
	queryLineage                      // LatestCompletedInLineage(dir)
	querySavepoint                    // LatestSavepoint(dir, job)
	queryCompletedAt                  // CompletedAt(dir): dir is a snapshot's path
)

// storeQuery is one question to the checkpoint store.
type storeQuery struct {
	kind     queryKind
	dir, job string
}

// storeAnswer is the store's answer to a storeQuery.
type storeAnswer struct {
	cp        checkpoint.Checkpoint
	completed time.Time
	err       error
}

// decisionInput is what a restore decision depends on, besides the policy.
type decisionInput struct {
	op        admissionv1.Operation
	namespace string
	user      authenticationv1.UserInfo
	// obj is the object being admitted; old the object before an UPDATE (nil otherwise).
	obj, old *flinkDeployment
	now      time.Time
	// store holds the store's answers so far.
	store map[storeQuery]storeAnswer
}

// logLine is a log entry of the decision, written by the handler.
type logLine struct {
	level slog.Level
	msg   string
	args  []any
}

// decisionEvent is a Warning Event on the object, emitted by the handler (not for dry runs).
type decisionEvent struct{ reason, msg string }

// decision is the outcome: a denial, or what to set on the object; the warnings,
// log lines and Events that explain it; or the store question it needs answered
// first (need).
type decision struct {
	reason, jobID string

	denied      *metav1.Status
	warnings    []string
	savepoint   string // set spec.job.initialSavepointPath
	upgradeMode string // set spec.job.upgradeMode
	annotations map[string]string
	events      []decisionEvent
	logs        []logLine

	need *storeQuery
}

func (d *decision) warn(format string, args ...any) {
	d.warnings = append(d.warnings, "flink-restore-webhook: "+fmt.Sprintf(format, args...))
}

func (d *decision) deny(code int32, reason metav1.StatusReason, format string, args ...any) {
	d.denied = &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    code,
		Reason:  reason,
		Message: "flink-restore-webhook: " + fmt.Sprintf(format, args...),
	}
}

func (d *decision) annotate(add map[string]string) {
	if d.annotations == nil {
		d.annotations = map[string]string{}
	}
	maps.Copy(d.annotations, add)
}

func (d *decision) log(level slog.Level, msg string, args ...any) {
	d.logs = append(d.logs, logLine{level: level, msg: msg, args: args})
}

func (d *decision) info(msg string, args ...any) { d.log(slog.LevelInfo, msg, args...) }
func (d *decision) warnLog(msg string, args ...any) {
	d.log(slog.LevelWarn, msg, args...)
}
func (d *decision) errorLog(msg string, args ...any) { d.log(slog.LevelError, msg, args...) }

func (d *decision) event(reason, msg string) {
	d.events = append(d.events, decisionEvent{reason: reason, msg: msg})
}

// decider decides one request under the policy c.
type decider struct {
	c  *Config
	in *decisionInput
	d  *decision
}

// ask returns the store's answer to q, or ok=false after recording q as the
// question the decision needs answered first.
func (x *decider) ask(q storeQuery) (storeAnswer, bool) {
	a, ok := x.in.store[q]
	if !ok {
		x.d.need = &q
	}
	return a, ok
}

// decide is the restore decision for a FlinkDeployment CREATE or UPDATE: pure,
// see the top of this file. It reads no clock, store or logger of c.
func (c *Config) decide(in *decisionInput) *decision {
	d := &decision{}
	x := &decider{c: c, in: in, d: d}
	var forged string
	d.reason, d.jobID, forged = c.marker(in.obj)
	if d.reason == "" {
		return d // not a failover re-creation: unchanged
	}
	if in.op == admissionv1.Update {
		if in.old != nil {
			if oldReason, _, _ := c.marker(in.old); oldReason != "" {
				x.carryForward() // decided when the marker arrived
				return d
			}
		}
		if in.obj.savepointPath() != "" {
			return d
		}
	}
	x.restore(forged)
	return d
}

// marker returns the failover reason and the old job id carried by the
// object ("" when absent), from its label or, for a reason that is not a valid
// label value, its annotation. The job id is read from the label, or from the
// annotation with the same key (Karmada stores values that are not valid
// label values as annotations), and only when Karmada lists that key in
// failover.karmada.io/preserved-keys: a template may carry the key itself,
// and Karmada propagates it unchanged when it carries no state. forged is
// the value of such an unlisted key ("" when absent).
func (c *Config) marker(f *flinkDeployment) (reason, jobID, forged string) {
	reason = f.Metadata.Labels[workv1alpha2.FailoverReasonLabel]
	if reason == "" {
		// The reason of an eviction that is not a valid label value (',' or ':') is an
		// annotation with the same key.
		reason = f.Metadata.Annotations[workv1alpha2.FailoverReasonLabel]
	}
	value := f.Metadata.Labels[c.JobIDKey]
	if value == "" {
		value = f.Metadata.Annotations[c.JobIDKey]
	}
	value = strings.TrimSpace(value)
	if !slices.Contains(strings.Split(f.Metadata.Annotations[workv1alpha2.FailoverPreservedKeysAnnotation], ","), c.JobIDKey) {
		return strings.TrimSpace(reason), "", value
	}
	return strings.TrimSpace(reason), value, ""
}

// restore decides a newly marked object: trust, job id, checkpoint
// directory, lookup, and the template's own initialSavepointPath.
func (x *decider) restore(forged string) {
	c, in, d, f := x.c, x.in, x.d, x.in.obj
	if !c.Trust.Trusted(in.user) {
		d.warnLog("failover marker set by an untrusted requester", "groups", in.user.Groups)
		x.missing(causeUntrusted, fmt.Sprintf("failover markers (%s) are honoured only from Karmada's identity (%s), not from %q: "+
			"if this is Karmada (e.g. karmada-agent in Pull mode), configure its identity (--sync-mode, --cluster-name, --trusted-username); users must not set %s",
			workv1alpha2.FailoverReasonLabel, c.Trust.describe(), in.user.Username, workv1alpha2.FailoverReasonLabel))
		return
	}
	if withheld := strings.TrimSpace(f.Metadata.Annotations[workv1alpha2.FailoverStateWithheldAnnotation]); withheld != "" {
		// Karmada does not confirm the old job stopped: restoring its state, by
		// the job id or from the checkpoint directory, would start a second
		// instance of it.
		x.missing(causeStateWithheld, fmt.Sprintf("%s=%s: Karmada withholds the old job's state because the job on %s is not "+
			"confirmed stopped (a PreservedStateWithheld event on the binding: purge mode other than Directly and the cluster not "+
			"tainted cluster.karmada.io/out-of-service); nothing is restored", workv1alpha2.FailoverStateWithheldAnnotation, withheld, withheld))
		return
	}
	if d.jobID == "" && forged != "" {
		d.warnLog("job id key not carried by Karmada: ignored", "key", c.JobIDKey, "value", forged)
		d.warn("%s=%q is the resource template's own value, not listed in %s: ignored", c.JobIDKey, forged, workv1alpha2.FailoverPreservedKeysAnnotation)
	}
	if d.jobID != "" {
		if err := checkpoint.ValidateJobID(d.jobID); err != nil {
			d.warnLog("invalid job id", "err", err)
			d.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "%s: %v", c.JobIDKey, err)
			return
		}
	}
	if f.Spec.Job == nil {
		d.info("FlinkDeployment without spec.job (session cluster): nothing to restore")
		d.warn("no spec.job (session cluster): nothing to restore")
		return
	}
	user := f.savepointPath()
	if user != "" && c.UserSavepoint == UserSavepointKeep {
		d.info("keeping the template's initialSavepointPath (user-savepoint=keep)", "initialSavepointPath", user)
		x.keepUserSavepoint()
		return
	}
	dir, ok := x.checkpointDir()
	if !ok {
		return
	}

	cp, err, ok := x.lookup(dir)
	if !ok {
		return
	}
	if err == nil {
		x.reportVerification(cp)
	}
	of := "job " + d.jobID
	if d.jobID == "" {
		of = "any job"
	}
	switch {
	case errors.Is(err, checkpoint.ErrNotFound) && user != "":
		d.info("no completed checkpoint: keeping the template's initialSavepointPath", "initialSavepointPath", user)
		x.keepUserSavepoint()
	case errors.Is(err, checkpoint.ErrNotRestorable):
		x.missing(causeNoCheckpoint, fmt.Sprintf("%s: a restore from them would fail; the store may still be replicating them", err))
	case errors.Is(err, checkpoint.ErrNotFound) && d.jobID == "":
		x.missing(causeNoJobID, fmt.Sprintf("%s=%s without a job id and no completed checkpoint (chk-N/_metadata) of any job "+
			"under %s: Karmada could not extract the job id (check the PropagationPolicy's statePreservation rule and the old "+
			"object's status.jobStatus.jobId)", workv1alpha2.FailoverReasonLabel, d.reason, dir.String()))
	case errors.Is(err, checkpoint.ErrNotFound):
		x.missing(causeNoCheckpoint, fmt.Sprintf("no completed checkpoint (chk-N/_metadata) of %s under %s", of, dir.String()))
	case errors.Is(err, checkpoint.ErrInvalid):
		d.warnLog("lookup rejected", "err", err)
		d.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "cannot restore %s: %v", of, err)
	case err != nil:
		d.errorLog("checkpoint lookup failed", "dir", dir.String(), "err", err)
		x.missing(causeLookupFailed, fmt.Sprintf("checkpoint lookup for %s under %s failed: %v", of, dir.String(), err))
	case user != "":
		x.preferNewer(user, cp)
	case d.jobID == "":
		d.info("no job id carried: restoring the newest completed checkpoint under the checkpoint directory",
			"checkpoint", cp.SavepointPath, "jobId", cp.JobID)
		d.warn("no job id carried: restoring the newest completed checkpoint under %s, %s of job %s", dir.String(), cp.SavepointPath, cp.JobID)
		x.setRestored(cp.SavepointPath, cp.JobID, DecisionRestoredLineage, nil)
	default:
		d.info("restoring from the latest completed checkpoint or savepoint", "checkpoint", cp.SavepointPath, "checkpointId", cp.ID, "savepoint", cp.Savepoint)
		x.setRestored(cp.SavepointPath, cp.JobID, DecisionRestored, nil)
	}
}

// lookup returns the checkpoint to restore: the newest completed one of the
// deployment's lineage under dir. With a carried job id that is the carried
// job's latest, unless a job started from its state since (for example on a
// cluster it never became healthy on) completed a newer one; without one, the
// newest of any job there (the object is re-created after the failover
// completed, or Karmada could not extract the job id).
//
// A savepoint of that job, or of the carried one, in the object's savepoint
// directory wins when it completed later: a stop with a savepoint (a planned
// move with the operator's savepoint on deletion) leaves the job's newest
// state there, and restoring it reprocesses nothing.
//
// ok is false when the store has a question to answer first.
func (x *decider) lookup(dir checkpoint.Location) (cp checkpoint.Checkpoint, err error, ok bool) {
	cp, err, ok = x.lookupCheckpoint(dir)
	if !ok || (err != nil && !errors.Is(err, checkpoint.ErrNotFound)) {
		return cp, err, ok
	}
	spDir, has := x.savepointDir()
	if !has {
		return cp, err, true
	}
	jobs := []string{x.d.jobID}
	if cp.JobID != "" && cp.JobID != x.d.jobID {
		jobs = append(jobs, cp.JobID)
	}
	for _, job := range jobs {
		if job == "" {
			continue
		}
		a, asked := x.ask(storeQuery{kind: querySavepoint, dir: spDir.String(), job: job})
		if !asked {
			return cp, err, false
		}
		sp, serr := a.cp, a.err
		if errors.Is(serr, checkpoint.ErrNotFound) {
			// Savepoints that exist but are not restorable are passed over too.
			if err == nil {
				cp.Skipped = mergeSkipped(cp.Skipped, sp.Skipped, cp.Completed)
			}
			continue
		}
		if serr != nil {
			return sp, serr, true
		}
		if err != nil || sp.Completed.After(cp.Completed) {
			x.d.info("a savepoint of the lineage completed after its latest checkpoint", "jobId", job, "savepoint", sp.SavepointPath,
				"savepointCompleted", sp.Completed, "checkpoint", cp.SavepointPath, "checkpointCompleted", cp.Completed)
			sp.Skipped = mergeSkipped(sp.Skipped, cp.Skipped, sp.Completed)
			cp, err = sp, nil
		} else {
			cp.Skipped = mergeSkipped(cp.Skipped, sp.Skipped, cp.Completed)
		}
	}
	return cp, err, true
}

// lookupCheckpoint returns the newest completed checkpoint of the lineage.
func (x *decider) lookupCheckpoint(dir checkpoint.Location) (checkpoint.Checkpoint, error, bool) {
	lineageQuery := storeQuery{kind: queryLineage, dir: dir.String()}
	if x.d.jobID == "" {
		a, ok := x.ask(lineageQuery)
		return a.cp, a.err, ok
	}
	carried, ok := x.ask(storeQuery{kind: queryLatest, dir: dir.String(), job: x.d.jobID})
	if !ok {
		return carried.cp, carried.err, false
	}
	cp, err := carried.cp, carried.err
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return cp, err, true
	}
	a, ok := x.ask(lineageQuery)
	if !ok {
		return cp, err, false
	}
	lineage, lerr := a.cp, a.err
	switch {
	case lerr == nil && (err != nil || lineage.Completed.After(cp.Completed)):
		x.d.info("a later job of the lineage checkpointed after the carried job", "jobId", lineage.JobID, "checkpoint", lineage.SavepointPath)
		return lineage, nil, true
	case lerr != nil && !errors.Is(lerr, checkpoint.ErrNotFound):
		return cp, lerr, true
	}
	return cp, err, true
}

// mergeSkipped adds to skipped those of more that completed after the
// chosen snapshot (at chosen), newest first.
func mergeSkipped(skipped, more []checkpoint.Skipped, chosen time.Time) []checkpoint.Skipped {
	out := slices.Clone(skipped)
	for _, sk := range more {
		if sk.Completed.After(chosen) && !slices.ContainsFunc(out, func(o checkpoint.Skipped) bool { return o.SavepointPath == sk.SavepointPath }) {
			out = append(out, sk)
		}
	}
	slices.SortStableFunc(out, func(a, b checkpoint.Skipped) int { return b.Completed.Compare(a.Completed) })
	return out
}

// maxSkippedAnnotation bounds the skipped paths recorded on the object.
const maxSkippedAnnotation = 10

// reportVerification tells the user which newer checkpoints the locator
// passed over and why (a warning, an annotation, a Warning Event), or that
// the chosen one could not be verified.
func (x *decider) reportVerification(cp checkpoint.Checkpoint) {
	d := x.d
	if cp.Unverified != "" {
		d.info("the checkpoint's state files were not confirmed", "checkpoint", cp.SavepointPath, "why", cp.Unverified)
		d.warn("%s: state files not confirmed (%s)", cp.SavepointPath, cp.Unverified)
	}
	if len(cp.Skipped) == 0 {
		return
	}
	paths := make([]string, 0, len(cp.Skipped))
	reasons := make([]string, 0, len(cp.Skipped))
	for i, sk := range cp.Skipped {
		if i < maxSkippedAnnotation {
			paths = append(paths, sk.SavepointPath)
		}
		reasons = append(reasons, sk.String())
	}
	d.annotate(map[string]string{AnnotationSkipped: strings.Join(paths, ",")})
	msg := fmt.Sprintf("restoring %s: %d newer completed checkpoint(s) not restorable, skipped: %s", cp.SavepointPath, len(cp.Skipped), strings.Join(reasons, "; "))
	d.warnLog("newer completed checkpoints are not restorable", "checkpoint", cp.SavepointPath, "skipped", reasons)
	d.warn("%s", msg)
	d.event(EventReasonCheckpointSkipped, msg)
}

// savepointDir returns the object's savepoint directory when it sets one
// inside the namespace's area; ok is false otherwise (savepoints are then not
// looked for).
func (x *decider) savepointDir() (dir checkpoint.Location, ok bool) {
	uri := x.in.obj.conf(flink.SavepointDirKeys)
	if uri == "" {
		return dir, false
	}
	dir, err := checkpoint.ParseLocation(uri)
	if err != nil {
		x.d.info("unusable savepoint directory: savepoints not considered", "dir", uri, "err", err)
		return dir, false
	}
	if why := x.c.checkPrefix(x.in.namespace, dir); why != "" {
		x.d.info("savepoint directory outside the namespace's area: savepoints not considered", "dir", dir.String())
		return dir, false
	}
	return dir, true
}

// keepUserSavepoint records that the template's initialSavepointPath is kept.
func (x *decider) keepUserSavepoint() {
	ann := map[string]string{AnnotationDecision: DecisionKeptUserSavepoint}
	if x.d.jobID != "" {
		ann[AnnotationFromJobID] = x.d.jobID
	}
	x.d.annotate(ann)
}

// checkpointDir returns the object's checkpoint directory, from its
// flinkConfiguration or --default-checkpoint-dir; ok is false when the
// request has been decided (no directory, unusable or outside the prefix).
func (x *decider) checkpointDir() (dir checkpoint.Location, ok bool) {
	c, d, f := x.c, x.d, x.in.obj
	dirURI := f.conf(flink.CheckpointDirKeys)
	if dirURI == "" && c.DefaultCheckpointDir != "" {
		dirURI = render(c.DefaultCheckpointDir, x.in.namespace)
	}
	if dirURI == "" {
		x.missing(causeNoCheckpointDir, fmt.Sprintf("spec.flinkConfiguration sets no checkpoint directory (%s): "+
			"if the operator's default configuration sets one, start the webhook with --default-checkpoint-dir", strings.Join(flink.CheckpointDirKeys, ", ")))
		return checkpoint.Location{}, false
	}
	if v := strings.ToLower(f.conf(flink.CreateSubdirKeys)); v == "false" {
		x.missing(causeNoCheckpointDir, fmt.Sprintf("%s is false: checkpoints are not stored per job id, so job %s's cannot be told apart", flink.CreateSubdirKeys[0], d.jobID))
		return checkpoint.Location{}, false
	}
	dir, err := checkpoint.ParseLocation(dirURI)
	if err != nil {
		d.warnLog("unusable checkpoint directory", "dir", dirURI, "err", err)
		d.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "cannot restore job %s: %v", d.jobID, err)
		return checkpoint.Location{}, false
	}
	if why := c.checkPrefix(x.in.namespace, dir); why != "" {
		d.warnLog("checkpoint directory outside the namespace's area", "dir", dir.String())
		d.deny(http.StatusForbidden, metav1.StatusReasonForbidden, "refusing to restore job %s: %s", d.jobID, why)
		return checkpoint.Location{}, false
	}
	return dir, true
}

// preferNewer decides between the template's initialSavepointPath and the
// carried job's latest checkpoint (--user-savepoint=override): the
// checkpoint wins unless the savepoint is known to be at least as new. Its
// completion time is read only inside the namespace's allowed area; when it
// cannot be read, the checkpoint is taken to be newer (the carried job ran
// after the savepoint it was started from).
func (x *decider) preferNewer(user string, cp checkpoint.Checkpoint) {
	d := x.d
	spTime, known, ok := x.savepointCompleted(user)
	if !ok {
		return
	}
	if known && !cp.Completed.IsZero() && !cp.Completed.After(spTime) {
		d.info("the template's initialSavepointPath is not older than the latest checkpoint: keeping it",
			"initialSavepointPath", user, "savepointCompleted", spTime, "checkpoint", cp.SavepointPath, "checkpointCompleted", cp.Completed)
		d.warn("keeping initialSavepointPath %s: it completed at %s, not before the latest checkpoint %s of job %s (%s)",
			user, spTime.UTC().Format(time.RFC3339), cp.SavepointPath, cp.JobID, cp.Completed.UTC().Format(time.RFC3339))
		x.keepUserSavepoint()
		return
	}
	d.info("replacing the template's initialSavepointPath with the newer checkpoint (user-savepoint=override)",
		"initialSavepointPath", user, "checkpoint", cp.SavepointPath, "checkpointId", cp.ID)
	x.setRestored(cp.SavepointPath, cp.JobID, DecisionRestoredOverUserSavepoint, map[string]string{AnnotationReplacedSavepoint: user})
}

// savepointCompleted returns when the snapshot at path completed (known=false:
// outside the namespace's area or unreadable); ok is false when the store has
// to answer first.
func (x *decider) savepointCompleted(path string) (t time.Time, known, ok bool) {
	loc, err := checkpoint.ParseLocation(path)
	if err != nil || x.c.checkPrefix(x.in.namespace, loc) != "" {
		return t, false, true
	}
	a, ok := x.ask(storeQuery{kind: queryCompletedAt, dir: loc.String()})
	if !ok {
		return t, false, false
	}
	if a.err != nil {
		x.d.info("cannot read when the template's initialSavepointPath completed", "initialSavepointPath", path, "err", a.err)
		return t, false, true
	}
	return a.completed, true, true
}

// setRestored sets spec.job.initialSavepointPath and, per policy,
// spec.job.upgradeMode, and records the decision. allowNonRestoredState is
// left as it is.
func (x *decider) setRestored(path, restoredJobID, decision string, extra map[string]string) {
	d := x.d
	d.savepoint = path
	d.upgradeMode = x.upgradeMode()
	ann := map[string]string{AnnotationDecision: decision, AnnotationCheckpoint: path}
	if d.jobID != "" {
		ann[AnnotationFromJobID] = d.jobID
	}
	if restoredJobID != "" && restoredJobID != d.jobID {
		ann[AnnotationRestoredJobID] = restoredJobID
	}
	d.annotate(ann)
	d.annotate(extra)
}

func (x *decider) upgradeMode() string {
	c, f := x.c, x.in.obj
	mode := f.Spec.Job.UpgradeMode
	switch {
	case mode == "savepoint" || c.UpgradeMode == UpgradeModeNever:
		return ""
	case c.UpgradeMode == UpgradeModeAlways || f.conf(flink.SavepointDirKeys) != "":
		return "savepoint"
	}
	if mode == "" {
		mode = "stateless"
	}
	x.d.warn("upgradeMode left as %s: no savepoint directory (%s) is configured and the operator rejects upgradeMode savepoint without one; the first deployment still restores from initialSavepointPath",
		mode, flink.SavepointDirKeys[0])
	return ""
}

// carryForward handles an UPDATE of an object that already carried the
// marker. Karmada re-applies the template, which has no initialSavepointPath
// (or the stale one this webhook replaced); if that update reached the
// member before the operator's first deployment, the restore would be lost.
// So while the marker is still present (with the same job id, or without it:
// Karmada removes the job id once the failover is complete) and Karmada sends
// the update, the path this webhook chose earlier (recorded in the old
// object's annotations and spec) is put back. Anything else passes unchanged.
func (x *decider) carryForward() {
	c, d, f, old := x.c, x.d, x.in.obj, x.in.old
	ann := old.Metadata.Annotations
	oldPath, decision := old.savepointPath(), ann[AnnotationDecision]
	_, oldJobID, _ := c.marker(old)
	dropped := f.savepointPath() == "" ||
		(decision == DecisionRestoredOverUserSavepoint && f.savepointPath() == ann[AnnotationReplacedSavepoint])
	if f.Spec.Job == nil || !dropped || oldPath == "" || (d.jobID != "" && d.jobID != oldJobID) ||
		(decision != DecisionRestored && decision != DecisionRestoredOverUserSavepoint && decision != DecisionRestoredLineage) ||
		ann[AnnotationCheckpoint] != oldPath || !c.Trust.Trusted(x.in.user) {
		return
	}
	loc, err := checkpoint.ParseLocation(oldPath)
	if err != nil || c.checkPrefix(x.in.namespace, loc) != "" {
		return
	}
	d.info("update from Karmada dropped the restored initialSavepointPath; carrying it forward", "checkpoint", oldPath)
	extra := map[string]string{}
	if decision == DecisionRestoredOverUserSavepoint {
		extra[AnnotationReplacedSavepoint] = ann[AnnotationReplacedSavepoint]
	}
	if d.jobID == "" && ann[AnnotationFromJobID] != "" {
		extra[AnnotationFromJobID] = ann[AnnotationFromJobID]
	}
	x.setRestored(oldPath, ann[AnnotationRestoredJobID], decision, extra)
}

// missing applies the on-missing policy to a failed-over object that has no
// state to restore (why says what is missing and what to do about it):
//   - deny: deny; Karmada retries the apply until the cause is fixed;
//   - deny-until-grace: deny until failover.karmada.io/time + MissingGrace,
//     then admit like start-fresh;
//   - start-fresh: admit the object unchanged (it starts without state, or
//     from the template's own initialSavepointPath), record the decision in
//     the annotation, warn and emit a Warning Event.
func (x *decider) missing(c cause, why string) {
	cfg, d, f := x.c, x.d, x.in.obj
	fallback := "the job starts without state"
	if p := f.savepointPath(); p != "" {
		fallback = "the job starts from the template's initialSavepointPath " + p
	}
	switch cfg.OnMissing {
	case OnMissingDeny:
		d.info("nothing to restore: denying (on-missing=deny)", "why", why)
		d.deny(c.code, c.reason, "%s; denied because on-missing=deny: once the cause is fixed, Karmada's next retry is admitted", why)
		return
	case OnMissingDenyUntilGrace:
		if wait := x.graceWait(fallback); wait != "" {
			d.info("nothing to restore: denying until the grace period ends", "why", why, "wait", wait)
			d.deny(c.code, c.reason, "%s; %s", why, wait)
			return
		}
	}
	how := "on-missing=" + cfg.OnMissing
	if cfg.OnMissing == OnMissingDenyUntilGrace {
		how = "the grace period (--missing-grace=" + cfg.MissingGrace.String() + ") is over"
	}
	msg := fmt.Sprintf("%s; %s (%s)", why, fallback, how)
	d.warnLog("admitting a failed-over object without its state", "why", why, "decision", c.decision)
	d.warn("%s", msg)
	ann := map[string]string{AnnotationDecision: c.decision}
	if d.jobID != "" && c != causeUntrusted {
		ann[AnnotationFromJobID] = d.jobID
	}
	d.annotate(ann)
	d.event(EventReasonNotRestored, msg)
}

// graceWait returns why the object is still denied under deny-until-grace,
// or "" once failover.karmada.io/time + MissingGrace has passed.
func (x *decider) graceWait(fallback string) string {
	grace := x.c.MissingGrace
	ts := x.in.obj.Metadata.Annotations[workv1alpha2.FailoverTimeAnnotation]
	if ts == "" {
		return fmt.Sprintf("denied until Karmada sets %s, which starts the grace period (--missing-grace=%s) after which %s",
			workv1alpha2.FailoverTimeAnnotation, grace, fallback)
	}
	start, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return fmt.Sprintf("denied: %s=%q is not an RFC 3339 time, so the grace period (--missing-grace=%s) cannot start", workv1alpha2.FailoverTimeAnnotation, ts, grace)
	}
	end := start.Add(grace)
	if !x.in.now.Before(end) {
		return ""
	}
	return fmt.Sprintf("denied until %s (%s %s + --missing-grace=%s) so that Karmada retries; after that %s",
		end.UTC().Format(time.RFC3339), workv1alpha2.FailoverTimeAnnotation, ts, grace, fallback)
}
