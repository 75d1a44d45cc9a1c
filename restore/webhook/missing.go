package webhook

import (
	"fmt"
	"net/http"
	"time"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karmada-failover/lab/apis/flink"
)

// EventReasonNotRestored is the reason of the Warning Event emitted when a
// failed-over object is admitted without the carried job's state.
const EventReasonNotRestored = "FailoverNotRestored"

// EventReasonCheckpointSkipped is the reason of the Warning Event emitted
// when newer completed checkpoints were passed over as not restorable.
const EventReasonCheckpointSkipped = "CheckpointNotRestorable"

// cause is why a failed-over object has no state to restore: the decision
// recorded when it is admitted anyway, and the status while it is denied.
type cause struct {
	decision string
	code     int32
	reason   metav1.StatusReason
}

var (
	causeUntrusted       = cause{DecisionIgnoredUntrusted, http.StatusForbidden, metav1.StatusReasonForbidden}
	causeNoJobID         = cause{DecisionNoJobID, http.StatusBadRequest, metav1.StatusReasonBadRequest}
	causeStateWithheld   = cause{DecisionStateWithheld, http.StatusConflict, metav1.StatusReasonConflict}
	causeNoCheckpointDir = cause{DecisionNoCheckpointDir, http.StatusBadRequest, metav1.StatusReasonBadRequest}
	causeNoCheckpoint    = cause{DecisionNoCheckpoint, http.StatusNotFound, metav1.StatusReasonNotFound}
	causeLookupFailed    = cause{DecisionLookupFailed, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable}
)

// missing applies the on-missing policy to a failed-over object that has no
// state to restore (why says what is missing and what to do about it):
//   - deny: deny; Karmada retries the apply until the cause is fixed;
//   - deny-until-grace: deny until failover.karmada.io/time + MissingGrace,
//     then admit like start-fresh;
//   - start-fresh: admit the object unchanged (it starts without state, or
//     from the template's own initialSavepointPath), record the decision in
//     the annotation, warn and emit a Warning Event.
func (h *Handler) missing(r *review, c cause, why string) {
	fallback := "the job starts without state"
	if p := r.f.savepointPath(); p != "" {
		fallback = "the job starts from the template's initialSavepointPath " + p
	}
	switch h.cfg.OnMissing {
	case OnMissingDeny:
		r.log.Info("nothing to restore: denying (on-missing=deny)", "why", why)
		r.deny(c.code, c.reason, "%s; denied because on-missing=deny: once the cause is fixed, Karmada's next retry is admitted", why)
		return
	case OnMissingDenyUntilGrace:
		if wait := h.graceWait(r.f, fallback); wait != "" {
			r.log.Info("nothing to restore: denying until the grace period ends", "why", why, "wait", wait)
			r.deny(c.code, c.reason, "%s; %s", why, wait)
			return
		}
	}
	how := "on-missing=" + h.cfg.OnMissing
	if h.cfg.OnMissing == OnMissingDenyUntilGrace {
		how = "the grace period (--missing-grace=" + h.cfg.MissingGrace.String() + ") is over"
	}
	msg := fmt.Sprintf("%s; %s (%s)", why, fallback, how)
	r.log.Warn("admitting a failed-over object without its state", "why", why, "decision", c.decision)
	r.warn("%s", msg)
	ann := map[string]string{AnnotationDecision: c.decision}
	if r.jobID != "" && c != causeUntrusted {
		ann[AnnotationFromJobID] = r.jobID
	}
	r.annotate(ann)
	h.event(r, msg)
}

// graceWait returns why the object is still denied under deny-until-grace,
// or "" once failover.karmada.io/time + MissingGrace has passed.
func (h *Handler) graceWait(f *flinkDeployment, fallback string) string {
	ts := f.Metadata.Annotations[workv1alpha2.FailoverTimeAnnotation]
	if ts == "" {
		return fmt.Sprintf("denied until Karmada sets %s, which starts the grace period (--missing-grace=%s) after which %s",
			workv1alpha2.FailoverTimeAnnotation, h.cfg.MissingGrace, fallback)
	}
	start, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return fmt.Sprintf("denied: %s=%q is not an RFC 3339 time, so the grace period (--missing-grace=%s) cannot start", workv1alpha2.FailoverTimeAnnotation, ts, h.cfg.MissingGrace)
	}
	end := start.Add(h.cfg.MissingGrace)
	if !h.cfg.Now().Before(end) {
		return ""
	}
	return fmt.Sprintf("denied until %s (%s %s + --missing-grace=%s) so that Karmada retries; after that %s",
		end.UTC().Format(time.RFC3339), workv1alpha2.FailoverTimeAnnotation, ts, h.cfg.MissingGrace, fallback)
}

// event emits a Warning Event on the object (not for dry runs). On CREATE
// the object has no uid yet, so the Event names it by kind, namespace and
// name only: kubectl events --for flinkdeployment/<name> shows it.
func (h *Handler) event(r *review, msg string) { h.eventWithReason(r, EventReasonNotRestored, msg) }

// eventWithReason emits a Warning Event with reason on the object, as event.
func (h *Handler) eventWithReason(r *review, reason, msg string) {
	if h.cfg.Events == nil || (r.req.DryRun != nil && *r.req.DryRun) {
		return
	}
	ref := &corev1.ObjectReference{
		APIVersion: flink.GroupVersion.String(),
		Kind:       flink.Kind,
		Namespace:  r.namespace,
		Name:       r.f.Metadata.Name,
		UID:        r.f.Metadata.UID,
	}
	h.cfg.Events.Event(ref, corev1.EventTypeWarning, reason, msg)
}
