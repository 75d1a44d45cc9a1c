package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/karmada-failover/lab/restore/checkpoint"
)

// LocateResponse is the body of GET /locate.
type LocateResponse struct {
	SavepointPath string `json:"savepointPath"`
	CheckpointID  int64  `json:"checkpointId"`
	Error         string `json:"error,omitempty"`
}

// serveLocate answers
//
//	GET /locate?namespace=<ns>&checkpointDir=<uri>&jobId=<id>
//
// with {"savepointPath": "...", "checkpointId": N}; 404 (same JSON shape with
// "error") when the job has no completed checkpoint, 400 for bad input, 403
// outside the namespace's allowed prefix, 503 when the store fails. It is
// meant for Kyverno's context.apiCall.service, which cannot authenticate, so
// the same prefix rule as for admission applies.
func (h *Handler) serveLocate(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, LocateResponse{Error: "use GET"})
		return
	}
	q := r.URL.Query()
	namespace, dirURI, jobID := q.Get("namespace"), q.Get("checkpointDir"), q.Get("jobId")
	if namespace == "" || dirURI == "" || jobID == "" {
		writeJSON(w, http.StatusBadRequest, LocateResponse{Error: "namespace, checkpointDir and jobId are required"})
		return
	}
	if err := checkpoint.ValidateJobID(jobID); err != nil {
		writeJSON(w, http.StatusBadRequest, LocateResponse{Error: err.Error()})
		return
	}
	dir, err := checkpoint.ParseLocation(dirURI)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, LocateResponse{Error: err.Error()})
		return
	}
	if why := h.cfg.checkPrefix(namespace, dir); why != "" {
		h.cfg.Logger.Warn("locate: outside the allowed prefix", "namespace", namespace, "dir", dir.String())
		writeJSON(w, http.StatusForbidden, LocateResponse{Error: why})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.LookupTimeout)
	defer cancel()
	cp, err := h.cfg.Locator.LatestCompleted(ctx, dir.String(), jobID)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		writeJSON(w, http.StatusNotFound, LocateResponse{Error: err.Error()})
	case errors.Is(err, checkpoint.ErrInvalid):
		writeJSON(w, http.StatusBadRequest, LocateResponse{Error: err.Error()})
	case err != nil:
		h.cfg.Logger.Error("locate: lookup failed", "namespace", namespace, "dir", dir.String(), "jobId", jobID, "err", err)
		writeJSON(w, http.StatusServiceUnavailable, LocateResponse{Error: "checkpoint lookup failed: " + err.Error()})
	default:
		h.cfg.Logger.Info("locate", "namespace", namespace, "jobId", jobID, "checkpoint", cp.SavepointPath)
		writeJSON(w, http.StatusOK, LocateResponse{SavepointPath: cp.SavepointPath, CheckpointID: cp.ID})
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
