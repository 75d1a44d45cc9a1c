package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karmada-failover/lab/apis/flink"
	"github.com/karmada-failover/lab/restore/checkpoint"
)

// LocateResponse is the body of GET /locate.
type LocateResponse struct {
	SavepointPath string `json:"savepointPath"`
	CheckpointID  int64  `json:"checkpointId"`
	// Skipped are the newer completed checkpoints passed over as not
	// restorable (--verify-state-files).
	Skipped []checkpoint.Skipped `json:"skipped,omitempty"`
	Error   string               `json:"error,omitempty"`
}

// LocateReview is the body of POST /locate: a FlinkDeployment CREATE or
// UPDATE as Kyverno's apiCall sends it (request.operation, request.namespace,
// request.userInfo, request.object, request.oldObject, request.dryRun). The
// caller vouches for userInfo, which is why /locate accepts only
// authenticated callers (--locate-allowed-username).
type LocateReview struct {
	// Operation is CREATE (also when empty) or UPDATE.
	Operation string                    `json:"operation"`
	Namespace string                    `json:"namespace"`
	UserInfo  authenticationv1.UserInfo `json:"userInfo"`
	Object    json.RawMessage           `json:"object"`
	// OldObject is the object before an UPDATE (ignored for a CREATE).
	OldObject json.RawMessage `json:"oldObject"`
	DryRun    bool            `json:"dryRun"`
}

// LocateDecision is the answer to POST /locate: the same decision /mutate
// makes, as fields a policy can apply. Every field is always present (empty
// when there is nothing to set) so that JMESPath never sees null.
type LocateDecision struct {
	// Decision is the value of AnnotationDecision ("" = object unchanged).
	Decision string `json:"decision"`
	// SavepointPath, when not empty, goes to spec.job.initialSavepointPath.
	SavepointPath string `json:"savepointPath"`
	// UpgradeMode, when not empty, goes to spec.job.upgradeMode.
	UpgradeMode string `json:"upgradeMode"`
	// Annotations go to metadata.annotations.
	Annotations map[string]string `json:"annotations"`
	Warnings    []string          `json:"warnings"`
	// Error is why the request is denied (HTTP status 4xx/5xx).
	Error string `json:"error,omitempty"`
}

// serveLocate answers
//
//	GET /locate?namespace=<ns>&checkpointDir=<uri>&jobId=<id>
//
// with {"savepointPath": "...", "checkpointId": N}; 404 (same JSON shape with
// "error") when the job has no completed checkpoint, 400 for bad input, 403
// outside the namespace's allowed prefix, 503 when the store fails; and
//
//	POST /locate  (body: LocateReview)
//
// with a LocateDecision: 200 when the object is admitted (with or without a
// path to set), the deny status (400/403/404/503) when it is denied.
func (h *Handler) serveLocate(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		h.serveLookup(w, r)
	case http.MethodPost:
		h.serveDecision(w, r)
	default:
		writeJSON(w, http.StatusMethodNotAllowed, LocateResponse{Error: "use GET (lookup) or POST (admission decision)"})
	}
}

func (h *Handler) serveLookup(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	namespace, dirURI, jobID := q.Get("namespace"), q.Get("checkpointDir"), q.Get("jobId")
	if namespace == "" || dirURI == "" || jobID == "" {
		writeJSON(w, http.StatusBadRequest, LocateResponse{Error: "namespace, checkpointDir and jobId are required"})
		return
	}
	if err := dnsLabel("namespace", namespace); err != nil {
		writeJSON(w, http.StatusBadRequest, LocateResponse{Error: err.Error()})
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
		writeJSON(w, http.StatusOK, LocateResponse{SavepointPath: cp.SavepointPath, CheckpointID: cp.ID, Skipped: cp.Skipped})
	}
}

// maxLocateReviewBytes bounds a POST /locate body (a FlinkDeployment and the caller's identity).
const maxLocateReviewBytes = 4 << 20

func (h *Handler) serveDecision(w http.ResponseWriter, r *http.Request) {
	var lr LocateReview
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxLocateReviewBytes)).Decode(&lr); err != nil {
		writeJSON(w, http.StatusBadRequest, newLocateDecision("decoding the LocateReview body: "+err.Error()))
		return
	}
	req, err := lr.admissionRequest()
	if err != nil {
		writeJSON(w, http.StatusBadRequest, newLocateDecision(err.Error()))
		return
	}
	rv := h.decide(r.Context(), req)
	code, out := rv.locateDecision()
	writeJSON(w, code, out)
}

// admissionRequest turns the review into the CREATE or UPDATE request
// /mutate would see.
func (lr *LocateReview) admissionRequest() (*admissionv1.AdmissionRequest, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(lr.Object, &tm); err != nil || tm.Kind != flink.Kind || tm.GroupVersionKind().Group != flink.Group {
		return nil, fmt.Errorf("object must be a flink.apache.org FlinkDeployment, not %q %q", tm.APIVersion, tm.Kind)
	}
	dryRun := lr.DryRun
	req := &admissionv1.AdmissionRequest{
		UID:       "locate",
		Kind:      metav1.GroupVersionKind{Group: flink.Group, Version: tm.GroupVersionKind().Version, Kind: flink.Kind},
		Resource:  metav1.GroupVersionResource{Group: flink.Group, Version: tm.GroupVersionKind().Version, Resource: flink.Resource},
		Namespace: lr.Namespace,
		Operation: admissionv1.Create,
		UserInfo:  lr.UserInfo,
		Object:    runtime.RawExtension{Raw: lr.Object},
		DryRun:    &dryRun,
	}
	switch admissionv1.Operation(lr.Operation) {
	case "", admissionv1.Create:
	case admissionv1.Update:
		var old, cur metav1.PartialObjectMetadata
		if err := json.Unmarshal(lr.OldObject, &old); err != nil || old.Kind != flink.Kind {
			return nil, fmt.Errorf("an UPDATE needs oldObject, the FlinkDeployment before it")
		}
		if err := json.Unmarshal(lr.Object, &cur); err != nil || old.Name != cur.Name || old.Namespace != cur.Namespace || old.APIVersion != cur.APIVersion {
			return nil, fmt.Errorf("oldObject %s/%s is not the object before this UPDATE (%s/%s)", old.Namespace, old.Name, cur.Namespace, cur.Name)
		}
		req.Operation, req.OldObject = admissionv1.Update, runtime.RawExtension{Raw: lr.OldObject}
	default:
		return nil, fmt.Errorf("operation %q: /locate decides CREATE and UPDATE", lr.Operation)
	}
	return req, nil
}

// newLocateDecision returns a decision with every field present.
func newLocateDecision(errMsg string) LocateDecision {
	return LocateDecision{Annotations: map[string]string{}, Warnings: []string{}, Error: errMsg}
}

// locateDecision renders the outcome for POST /locate.
func (r *review) locateDecision() (int, LocateDecision) {
	out := newLocateDecision("")
	out.Warnings = append(out.Warnings, r.warnings...)
	if r.denied != nil {
		out.Error = r.denied.Message
		return int(r.denied.Code), out
	}
	maps.Copy(out.Annotations, r.annotations)
	out.Decision = r.annotations[AnnotationDecision]
	out.SavepointPath, out.UpgradeMode = r.savepoint, r.upgradeMode
	return http.StatusOK, out
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
