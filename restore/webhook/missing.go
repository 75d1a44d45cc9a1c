package webhook

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
