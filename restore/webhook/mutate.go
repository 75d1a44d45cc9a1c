package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/karmada-failover/lab/restore/checkpoint"
)

// Flink configuration keys, newest first (Flink resolves the current key
// before its deprecated aliases; see CheckpointingOptions).
var (
	checkpointDirKeys = []string{"execution.checkpointing.dir", "state.checkpoints.dir", "state.backend.fs.checkpointdir"}
	savepointDirKeys  = []string{"execution.checkpointing.savepoint-dir", "state.savepoints.dir", "savepoints.state.backend.fs.dir"}
	createSubdirKeys  = []string{"execution.checkpointing.create-subdir", "state.checkpoints.create-subdir"}
)

// flinkDeployment holds the fields of a FlinkDeployment the webhook reads.
type flinkDeployment struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		// flinkConfiguration has x-kubernetes-preserve-unknown-fields: it may be
		// flat ("a.b": "v") or nested YAML ({a: {b: v}}).
		FlinkConfiguration map[string]any `json:"flinkConfiguration"`
		Job                *struct {
			InitialSavepointPath string `json:"initialSavepointPath"`
			UpgradeMode          string `json:"upgradeMode"`
		} `json:"job"`
	} `json:"spec"`
}

func (f *flinkDeployment) conf(keys []string) string {
	for _, k := range keys {
		if v, ok := confGet(f.Spec.FlinkConfiguration, k); ok && v != "" {
			return v
		}
	}
	return ""
}

func (f *flinkDeployment) savepointPath() string {
	if f.Spec.Job == nil {
		return ""
	}
	return f.Spec.Job.InitialSavepointPath
}

// confGet looks key up in a flat or nested configuration map: "a.b.c" may be
// stored as {"a.b.c": v}, {"a": {"b.c": v}}, {"a": {"b": {"c": v}}}, ….
func confGet(m map[string]any, key string) (string, bool) {
	if m == nil {
		return "", false
	}
	if v, ok := m[key]; ok {
		switch v.(type) {
		case map[string]any, []any, nil:
		default:
			return fmt.Sprint(v), true
		}
	}
	for i := 0; i < len(key); i++ {
		if key[i] != '.' {
			continue
		}
		if sub, ok := m[key[:i]].(map[string]any); ok {
			if v, ok := confGet(sub, key[i+1:]); ok {
				return v, true
			}
		}
	}
	return "", false
}

// marker returns the failover reason and the old job id carried by the
// object ("" when absent). The job id is read from the label, or from the
// annotation with the same key (Karmada stores values that are not valid
// label values as annotations).
func (h *Handler) marker(f *flinkDeployment) (reason, jobID string) {
	reason = f.Metadata.Labels[LabelFailoverReason]
	jobID = f.Metadata.Labels[h.cfg.JobIDKey]
	if jobID == "" {
		jobID = f.Metadata.Annotations[h.cfg.JobIDKey]
	}
	return strings.TrimSpace(reason), strings.TrimSpace(jobID)
}

type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// annotationOps adds/overwrites annotations, creating metadata.annotations
// when the object has none.
func annotationOps(f *flinkDeployment, add map[string]string) []patchOp {
	if f.Metadata.Annotations == nil {
		return []patchOp{{Op: "add", Path: "/metadata/annotations", Value: add}}
	}
	keys := make([]string, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ops := make([]patchOp, 0, len(keys))
	for _, k := range keys {
		ops = append(ops, patchOp{Op: "add", Path: "/metadata/annotations/" + escapePointer(k), Value: add[k]})
	}
	return ops
}

// Handler serves /mutate, /locate and /healthz.
type Handler struct {
	cfg Config
	mux *http.ServeMux
}

// NewHandler validates cfg and builds the handler.
func NewHandler(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, mux: http.NewServeMux()}
	h.mux.HandleFunc("/mutate", h.serveMutate)
	h.mux.HandleFunc("/locate", h.serveLocate)
	h.mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok"))
	})
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

const maxReviewBytes = 4 << 20

func (h *Handler) serveMutate(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST an admission.k8s.io/v1 AdmissionReview", http.StatusMethodNotAllowed)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxReviewBytes)).Decode(&review); err != nil {
		http.Error(w, "decoding AdmissionReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	if review.Request == nil {
		http.Error(w, "AdmissionReview has no request", http.StatusBadRequest)
		return
	}
	resp := h.Mutate(r.Context(), review.Request)
	out := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Response: resp,
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(out); err != nil {
		h.cfg.Logger.Error("writing AdmissionReview", "err", err)
	}
}

// decision collects the outcome of one admission request.
type decision struct {
	resp *admissionv1.AdmissionResponse
	f    *flinkDeployment
	ops  []patchOp
}

func (d *decision) warn(format string, args ...any) {
	d.resp.Warnings = append(d.resp.Warnings, "flink-restore-webhook: "+fmt.Sprintf(format, args...))
}

func (d *decision) deny(code int32, reason metav1.StatusReason, format string, args ...any) *admissionv1.AdmissionResponse {
	d.resp.Allowed = false
	d.resp.Result = &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    code,
		Reason:  reason,
		Message: "flink-restore-webhook: " + fmt.Sprintf(format, args...),
	}
	return d.resp
}

func (d *decision) annotate(add map[string]string) *admissionv1.AdmissionResponse {
	d.ops = append(d.ops, annotationOps(d.f, add)...)
	return d.finish()
}

func (d *decision) finish() *admissionv1.AdmissionResponse {
	if len(d.ops) == 0 {
		return d.resp
	}
	patch, err := json.Marshal(d.ops)
	if err != nil { // cannot happen: strings and string maps only
		return d.deny(http.StatusInternalServerError, metav1.StatusReasonInternalError, "encoding patch: %v", err)
	}
	pt := admissionv1.PatchTypeJSONPatch
	d.resp.Patch, d.resp.PatchType = patch, &pt
	return d.resp
}

// Mutate decides one admission request.
func (h *Handler) Mutate(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	d := &decision{resp: &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}}
	if req.Resource.Group != "flink.apache.org" || req.Resource.Resource != "flinkdeployments" || req.SubResource != "" {
		return d.resp
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return d.resp
	}
	f := &flinkDeployment{}
	if err := json.Unmarshal(req.Object.Raw, f); err != nil {
		return d.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "decoding FlinkDeployment: %v", err)
	}
	d.f = f
	reason, jobID := h.marker(f)
	if reason == "" {
		return d.resp // not a failover re-creation: unchanged
	}
	namespace := req.Namespace
	if namespace == "" {
		namespace = f.Metadata.Namespace
	}
	log := h.cfg.Logger.With("namespace", namespace, "name", req.Name, "uid", req.UID,
		"operation", req.Operation, "user", req.UserInfo.Username, "reason", reason, "jobId", jobID)

	if req.Operation == admissionv1.Update {
		old := &flinkDeployment{}
		if len(req.OldObject.Raw) > 0 {
			if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
				return d.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "decoding old FlinkDeployment: %v", err)
			}
		}
		if oldReason, oldJobID := h.marker(old); oldReason != "" && oldJobID != "" {
			return h.carryForward(d, req, old, namespace, jobID, log)
		}
		if f.savepointPath() != "" {
			return d.resp
		}
	}

	if jobID == "" {
		log.Info("failover marker without a job id: nothing to restore")
		d.warn("%s=%s but no %s label or annotation: starting without state", LabelFailoverReason, reason, h.cfg.JobIDKey)
		return d.resp
	}

	if !h.cfg.Trust.Trusted(req.UserInfo) {
		log.Warn("failover marker set by an untrusted requester: not restoring", "groups", req.UserInfo.Groups)
		d.warn("failover markers are only honoured from Karmada's identity, not from %q; spec left unchanged", req.UserInfo.Username)
		return d.annotate(map[string]string{AnnotationDecision: DecisionIgnoredUntrusted})
	}

	if err := checkpoint.ValidateJobID(jobID); err != nil {
		log.Warn("invalid job id", "err", err)
		return d.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "%s: %v", h.cfg.JobIDKey, err)
	}
	if f.Spec.Job == nil {
		log.Info("FlinkDeployment without spec.job (session cluster): nothing to restore")
		d.warn("no spec.job (session cluster): nothing to restore")
		return d.resp
	}
	if p := f.savepointPath(); p != "" {
		log.Info("keeping the user's initialSavepointPath", "initialSavepointPath", p)
		return d.annotate(map[string]string{AnnotationDecision: DecisionKeptUserSavepoint, AnnotationFromJobID: jobID})
	}

	dirURI := f.conf(checkpointDirKeys)
	if dirURI == "" {
		return h.missing(d, log, jobID, "spec.flinkConfiguration sets no checkpoint directory (%s)", strings.Join(checkpointDirKeys, ", "))
	}
	if v := strings.ToLower(f.conf(createSubdirKeys)); v == "false" {
		return h.missing(d, log, jobID, "%s is false: checkpoints are not stored per job id, so job %s's cannot be told apart", createSubdirKeys[0], jobID)
	}
	dir, err := checkpoint.ParseLocation(dirURI)
	if err != nil {
		log.Warn("unusable checkpoint directory", "dir", dirURI, "err", err)
		return d.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "cannot restore job %s: %v", jobID, err)
	}
	if why := h.cfg.checkPrefix(namespace, dir); why != "" {
		log.Warn("checkpoint directory outside the namespace's area", "dir", dir.String())
		return d.deny(http.StatusForbidden, metav1.StatusReasonForbidden, "refusing to restore job %s: %s", jobID, why)
	}

	lctx, cancel := context.WithTimeout(ctx, h.cfg.LookupTimeout)
	defer cancel()
	cp, err := h.cfg.Locator.LatestCompleted(lctx, dir.String(), jobID)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		return h.missing(d, log, jobID, "no completed checkpoint (chk-N/_metadata) of job %s under %s", jobID, dir.String())
	case errors.Is(err, checkpoint.ErrInvalid):
		log.Warn("lookup rejected", "err", err)
		return d.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "cannot restore job %s: %v", jobID, err)
	case err != nil:
		log.Error("checkpoint lookup failed", "dir", dir.String(), "err", err)
		if h.cfg.FailurePolicy == FailurePolicyIgnore {
			d.warn("checkpoint lookup failed (%v); starting without state because failure-policy=ignore", err)
			return d.annotate(map[string]string{AnnotationDecision: DecisionLookupFailedIgnore, AnnotationFromJobID: jobID})
		}
		return d.deny(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable,
			"checkpoint lookup for job %s under %s failed, retry later (the apply is retried by Karmada): %v", jobID, dir.String(), err)
	}

	d.ops = append(d.ops, h.restoreOps(d, f, cp.SavepointPath)...)
	log.Info("restoring from the latest completed checkpoint", "checkpoint", cp.SavepointPath, "checkpointId", cp.ID)
	return d.annotate(map[string]string{
		AnnotationDecision:   DecisionRestored,
		AnnotationCheckpoint: cp.SavepointPath,
		AnnotationFromJobID:  jobID,
	})
}

// restoreOps sets spec.job.initialSavepointPath and, per policy,
// spec.job.upgradeMode. allowNonRestoredState is left as it is.
func (h *Handler) restoreOps(d *decision, f *flinkDeployment, path string) []patchOp {
	ops := []patchOp{{Op: "add", Path: "/spec/job/initialSavepointPath", Value: path}}
	mode := f.Spec.Job.UpgradeMode
	switch {
	case mode == "savepoint" || h.cfg.UpgradeMode == UpgradeModeNever:
	case h.cfg.UpgradeMode == UpgradeModeAlways || f.conf(savepointDirKeys) != "":
		ops = append(ops, patchOp{Op: "add", Path: "/spec/job/upgradeMode", Value: "savepoint"})
	default:
		if mode == "" {
			mode = "stateless"
		}
		d.warn("upgradeMode left as %s: no savepoint directory (%s) is configured and the operator rejects upgradeMode savepoint without one; the first deployment still restores from initialSavepointPath",
			mode, savepointDirKeys[0])
	}
	return ops
}

// missing applies the on-missing policy.
func (h *Handler) missing(d *decision, log *slog.Logger, jobID, format string, args ...any) *admissionv1.AdmissionResponse {
	why := fmt.Sprintf(format, args...)
	if h.cfg.OnMissing == OnMissingDeny {
		log.Info("no checkpoint: denying (on-missing=deny)", "why", why)
		return d.deny(http.StatusNotFound, metav1.StatusReasonNotFound, "%s; on-missing=deny", why)
	}
	log.Info("no checkpoint: starting fresh", "why", why)
	d.warn("%s; starting without state", why)
	return d.annotate(map[string]string{AnnotationDecision: DecisionNoCheckpoint, AnnotationFromJobID: jobID})
}

// carryForward handles an UPDATE of an object that already carried the
// marker. Karmada re-applies the template, which has no initialSavepointPath;
// if that update reached the member before the operator's first deployment,
// the restore would be lost. So while the marker (same job id) is still
// present and Karmada sends the update, the path this webhook chose earlier
// (recorded in the old object's annotations and spec) is put back. Anything
// else passes unchanged.
func (h *Handler) carryForward(d *decision, req *admissionv1.AdmissionRequest, old *flinkDeployment, namespace, jobID string, log *slog.Logger) *admissionv1.AdmissionResponse {
	f := d.f
	oldPath := old.savepointPath()
	_, oldJobID := h.marker(old)
	if f.Spec.Job == nil || f.savepointPath() != "" || oldPath == "" || jobID != oldJobID ||
		old.Metadata.Annotations[AnnotationDecision] != DecisionRestored ||
		old.Metadata.Annotations[AnnotationCheckpoint] != oldPath ||
		!h.cfg.Trust.Trusted(req.UserInfo) {
		return d.resp
	}
	loc, err := checkpoint.ParseLocation(oldPath)
	if err != nil || h.cfg.checkPrefix(namespace, loc) != "" {
		return d.resp
	}
	log.Info("update from Karmada dropped initialSavepointPath; carrying the restored checkpoint forward", "checkpoint", oldPath)
	d.ops = append(d.ops, h.restoreOps(d, f, oldPath)...)
	return d.annotate(map[string]string{
		AnnotationDecision:   DecisionRestored,
		AnnotationCheckpoint: oldPath,
		AnnotationFromJobID:  jobID,
	})
}
