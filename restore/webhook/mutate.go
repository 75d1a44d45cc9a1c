package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karmada-failover/lab/apis/flink"
	"github.com/karmada-failover/lab/restore/checkpoint"
)

// flinkDeployment holds the fields of a FlinkDeployment the webhook reads.
type flinkDeployment struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		UID         types.UID         `json:"uid"`
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
	return flink.First(keys, flink.Configuration(f.Spec.FlinkConfiguration))
}

func (f *flinkDeployment) savepointPath() string {
	if f.Spec.Job == nil {
		return ""
	}
	return f.Spec.Job.InitialSavepointPath
}

// marker returns the failover reason and the old job id carried by the
// object ("" when absent). The job id is read from the label, or from the
// annotation with the same key (Karmada stores values that are not valid
// label values as annotations), and only when Karmada lists that key in
// failover.karmada.io/preserved-keys: a template may carry the key itself,
// and Karmada propagates it unchanged when it carries no state. forged is
// the value of such an unlisted key ("" when absent).
func (h *Handler) marker(f *flinkDeployment) (reason, jobID, forged string) {
	reason = f.Metadata.Labels[workv1alpha2.FailoverReasonLabel]
	value := f.Metadata.Labels[h.cfg.JobIDKey]
	if value == "" {
		value = f.Metadata.Annotations[h.cfg.JobIDKey]
	}
	value = strings.TrimSpace(value)
	if !slices.Contains(strings.Split(f.Metadata.Annotations[workv1alpha2.FailoverPreservedKeysAnnotation], ","), h.cfg.JobIDKey) {
		return strings.TrimSpace(reason), "", value
	}
	return strings.TrimSpace(reason), value, ""
}

// Handler serves /mutate, /locate and /healthz.
type Handler struct {
	cfg   Config
	guard *guard
	mux   *http.ServeMux
}

// NewHandler validates cfg and builds the handler.
func NewHandler(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, guard: newGuard(cfg.Auth), mux: http.NewServeMux()}
	h.mux.HandleFunc("/mutate", h.guarded(EndpointMutate, h.serveMutate()))
	h.mux.HandleFunc("/locate", h.guarded(EndpointLocate, h.serveLocate))
	h.mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok"))
	})
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// guarded authenticates and rate limits the caller before next.
func (h *Handler) guarded(endpoint string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := h.guard.check(r, endpoint); err != nil {
			h.cfg.Logger.Warn("refused a call", "endpoint", endpoint, "remote", r.RemoteAddr, "code", err.code, "why", err.msg)
			refuse(w, endpoint, err)
			return
		}
		next(w, r)
	}
}

// serveMutate serves /mutate with controller-runtime's admission webhook, which decodes the
// AdmissionReview (v1 or v1beta1) and encodes the response with the JSON patch computed from the
// object before and after the mutation.
func (h *Handler) serveMutate() http.HandlerFunc {
	wh := &admission.Webhook{
		Handler: h,
		LogConstructor: func(_ logr.Logger, req *admission.Request) logr.Logger {
			l := logr.FromSlogHandler(h.cfg.Logger.Handler()).WithName("admission")
			if req != nil {
				l = l.WithValues("uid", req.UID, "namespace", req.Namespace, "name", req.Name)
			}
			return l
		},
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST an admission.k8s.io/v1 AdmissionReview", http.StatusMethodNotAllowed)
			return
		}
		wh.ServeHTTP(w, r)
	}
}

// Handle decides one admission request (admission.Handler).
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.UID == "" {
		return admission.Errored(http.StatusBadRequest, errors.New("AdmissionReview has no request"))
	}
	return h.decide(ctx, &req.AdmissionRequest).response()
}

// Mutate decides one admission request and returns the AdmissionResponse the API server
// receives, with the JSON patch encoded.
func (h *Handler) Mutate(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	ar := admission.Request{AdmissionRequest: *req}
	resp := h.Handle(ctx, ar)
	if err := resp.Complete(ar); err != nil {
		resp = admission.Errored(http.StatusInternalServerError, fmt.Errorf("encoding the patch: %w", err))
		_ = resp.Complete(ar)
	}
	return &resp.AdmissionResponse
}

// review is one admission request being decided: what the webhook read and
// the outcome, independent of how it is returned (a JSON patch for /mutate,
// JSON for POST /locate).
type review struct {
	req       *admissionv1.AdmissionRequest
	f         *flinkDeployment
	namespace string
	reason    string
	jobID     string
	// forged is the job id key's value when Karmada did not list the key in
	// failover.karmada.io/preserved-keys: named in the decision, never restored.
	forged string
	log    *slog.Logger

	denied      *metav1.Status
	warnings    []string
	savepoint   string // set spec.job.initialSavepointPath
	upgradeMode string // set spec.job.upgradeMode
	annotations map[string]string
}

func (r *review) warn(format string, args ...any) {
	r.warnings = append(r.warnings, "flink-restore-webhook: "+fmt.Sprintf(format, args...))
}

func (r *review) deny(code int32, reason metav1.StatusReason, format string, args ...any) {
	r.denied = &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    code,
		Reason:  reason,
		Message: "flink-restore-webhook: " + fmt.Sprintf(format, args...),
	}
}

func (r *review) annotate(add map[string]string) {
	if r.annotations == nil {
		r.annotations = map[string]string{}
	}
	maps.Copy(r.annotations, add)
}

// response renders the outcome: a denial, or the object with the savepoint path, the upgrade
// mode and the annotations set, as a patch against the object the API server sent.
func (r *review) response() admission.Response {
	if r.denied != nil {
		resp := admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: r.denied}}
		return resp.WithWarnings(r.warnings...)
	}
	if r.savepoint == "" && r.upgradeMode == "" && len(r.annotations) == 0 {
		return admission.Allowed("").WithWarnings(r.warnings...)
	}
	mutated, err := r.mutated()
	if err != nil { // cannot happen: the object was decoded before
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("flink-restore-webhook: mutating the object: %w", err))
	}
	return admission.PatchResponseFromRaw(r.req.Object.Raw, mutated).WithWarnings(r.warnings...)
}

// mutated returns the object with the decided fields set. Numbers are kept as they were sent.
func (r *review) mutated() ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(r.req.Object.Raw))
	dec.UseNumber()
	obj := map[string]any{}
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if r.savepoint != "" {
		if err := unstructured.SetNestedField(obj, r.savepoint, "spec", "job", "initialSavepointPath"); err != nil {
			return nil, err
		}
	}
	if r.upgradeMode != "" {
		if err := unstructured.SetNestedField(obj, r.upgradeMode, "spec", "job", "upgradeMode"); err != nil {
			return nil, err
		}
	}
	if len(r.annotations) > 0 {
		annotations, _, err := unstructured.NestedStringMap(obj, "metadata", "annotations")
		if err != nil {
			return nil, err
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		maps.Copy(annotations, r.annotations)
		if err := unstructured.SetNestedStringMap(obj, annotations, "metadata", "annotations"); err != nil {
			return nil, err
		}
	}
	return json.Marshal(obj)
}

// decide reads the request and decides it.
func (h *Handler) decide(ctx context.Context, req *admissionv1.AdmissionRequest) *review {
	r := &review{req: req, f: &flinkDeployment{}}
	if req.Resource.Group != flink.Group || req.Resource.Resource != flink.Resource || req.SubResource != "" {
		return r
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return r
	}
	if err := json.Unmarshal(req.Object.Raw, r.f); err != nil {
		r.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "decoding FlinkDeployment: %v", err)
		return r
	}
	if r.f.Metadata.Name == "" {
		r.f.Metadata.Name = req.Name
	}
	r.reason, r.jobID, r.forged = h.marker(r.f)
	if r.reason == "" {
		return r // not a failover re-creation: unchanged
	}
	r.namespace = req.Namespace
	if r.namespace == "" {
		r.namespace = r.f.Metadata.Namespace
	}
	r.log = h.cfg.Logger.With("namespace", r.namespace, "name", r.f.Metadata.Name, "uid", req.UID,
		"operation", req.Operation, "user", req.UserInfo.Username, "reason", r.reason, "jobId", r.jobID)

	if req.Operation == admissionv1.Update {
		old := &flinkDeployment{}
		if len(req.OldObject.Raw) > 0 {
			if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
				r.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "decoding old FlinkDeployment: %v", err)
				return r
			}
		}
		if oldReason, _, _ := h.marker(old); oldReason != "" {
			h.carryForward(r, old) // decided when the marker arrived
			return r
		}
		if r.f.savepointPath() != "" {
			return r
		}
	}
	h.restore(ctx, r)
	return r
}

// restore decides a newly marked object: trust, job id, checkpoint
// directory, lookup, and the template's own initialSavepointPath.
func (h *Handler) restore(ctx context.Context, r *review) {
	f := r.f
	if !h.cfg.Trust.Trusted(r.req.UserInfo) {
		r.log.Warn("failover marker set by an untrusted requester", "groups", r.req.UserInfo.Groups)
		h.missing(r, causeUntrusted, fmt.Sprintf("failover markers (%s) are honoured only from Karmada's identity (%s), not from %q: "+
			"if this is Karmada (e.g. karmada-agent in Pull mode), configure its identity (--sync-mode, --cluster-name, --trusted-username); users must not set %s",
			workv1alpha2.FailoverReasonLabel, h.cfg.Trust.describe(), r.req.UserInfo.Username, workv1alpha2.FailoverReasonLabel))
		return
	}
	if withheld := strings.TrimSpace(f.Metadata.Annotations[workv1alpha2.FailoverStateWithheldAnnotation]); withheld != "" {
		// Karmada does not confirm the old job stopped: restoring its state, by
		// the job id or from the checkpoint directory, would start a second
		// instance of it.
		h.missing(r, causeStateWithheld, fmt.Sprintf("%s=%s: Karmada withholds the old job's state because the job on %s is not "+
			"confirmed stopped (a PreservedStateWithheld event on the binding: purge mode other than Directly and the cluster not "+
			"tainted failover.karmada.io/out-of-service); nothing is restored", workv1alpha2.FailoverStateWithheldAnnotation, withheld, withheld))
		return
	}
	if r.jobID == "" && r.forged != "" {
		r.log.Warn("job id key not carried by Karmada: ignored", "key", h.cfg.JobIDKey, "value", r.forged)
		r.warn("%s=%q is the resource template's own value, not listed in %s: ignored", h.cfg.JobIDKey, r.forged, workv1alpha2.FailoverPreservedKeysAnnotation)
	}
	if r.jobID != "" {
		if err := checkpoint.ValidateJobID(r.jobID); err != nil {
			r.log.Warn("invalid job id", "err", err)
			r.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "%s: %v", h.cfg.JobIDKey, err)
			return
		}
	}
	if f.Spec.Job == nil {
		r.log.Info("FlinkDeployment without spec.job (session cluster): nothing to restore")
		r.warn("no spec.job (session cluster): nothing to restore")
		return
	}
	user := f.savepointPath()
	if user != "" && h.cfg.UserSavepoint == UserSavepointKeep {
		r.log.Info("keeping the template's initialSavepointPath (user-savepoint=keep)", "initialSavepointPath", user)
		h.keepUserSavepoint(r)
		return
	}
	dir, ok := h.checkpointDir(r)
	if !ok {
		return
	}

	lctx, cancel := context.WithTimeout(ctx, h.cfg.LookupTimeout)
	defer cancel()
	cp, err := h.lookup(lctx, r, dir)
	if err == nil {
		h.reportVerification(r, cp)
	}
	of := "job " + r.jobID
	if r.jobID == "" {
		of = "any job"
	}
	switch {
	case errors.Is(err, checkpoint.ErrNotFound) && user != "":
		r.log.Info("no completed checkpoint: keeping the template's initialSavepointPath", "initialSavepointPath", user)
		h.keepUserSavepoint(r)
	case errors.Is(err, checkpoint.ErrNotRestorable):
		h.missing(r, causeNoCheckpoint, fmt.Sprintf("%s: a restore from them would fail; the store may still be replicating them", err))
	case errors.Is(err, checkpoint.ErrNotFound) && r.jobID == "":
		h.missing(r, causeNoJobID, fmt.Sprintf("%s=%s without a job id and no completed checkpoint (chk-N/_metadata) of any job "+
			"under %s: Karmada could not extract the job id (check the PropagationPolicy's statePreservation rule and the old "+
			"object's status.jobStatus.jobId)", workv1alpha2.FailoverReasonLabel, r.reason, dir.String()))
	case errors.Is(err, checkpoint.ErrNotFound):
		h.missing(r, causeNoCheckpoint, fmt.Sprintf("no completed checkpoint (chk-N/_metadata) of %s under %s", of, dir.String()))
	case errors.Is(err, checkpoint.ErrInvalid):
		r.log.Warn("lookup rejected", "err", err)
		r.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "cannot restore %s: %v", of, err)
	case err != nil:
		r.log.Error("checkpoint lookup failed", "dir", dir.String(), "err", err)
		h.missing(r, causeLookupFailed, fmt.Sprintf("checkpoint lookup for %s under %s failed: %v", of, dir.String(), err))
	case user != "":
		h.preferNewer(lctx, r, user, cp)
	case r.jobID == "":
		r.log.Info("no job id carried: restoring the newest completed checkpoint under the checkpoint directory",
			"checkpoint", cp.SavepointPath, "jobId", cp.JobID)
		r.warn("no job id carried: restoring the newest completed checkpoint under %s, %s of job %s", dir.String(), cp.SavepointPath, cp.JobID)
		h.setRestored(r, cp.SavepointPath, cp.JobID, DecisionRestoredLineage, nil)
	default:
		r.log.Info("restoring from the latest completed checkpoint or savepoint", "checkpoint", cp.SavepointPath, "checkpointId", cp.ID, "savepoint", cp.Savepoint)
		h.setRestored(r, cp.SavepointPath, cp.JobID, DecisionRestored, nil)
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
func (h *Handler) lookup(ctx context.Context, r *review, dir checkpoint.Location) (checkpoint.Checkpoint, error) {
	cp, err := h.lookupCheckpoint(ctx, r, dir)
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return cp, err
	}
	spDir, ok := h.savepointDir(r)
	if !ok {
		return cp, err
	}
	jobs := []string{r.jobID}
	if cp.JobID != "" && cp.JobID != r.jobID {
		jobs = append(jobs, cp.JobID)
	}
	for _, job := range jobs {
		if job == "" {
			continue
		}
		sp, serr := h.cfg.Locator.LatestSavepoint(ctx, spDir.String(), job)
		if errors.Is(serr, checkpoint.ErrNotFound) {
			// Savepoints that exist but are not restorable are passed over too.
			if err == nil {
				cp.Skipped = mergeSkipped(cp.Skipped, sp.Skipped, cp.Completed)
			}
			continue
		}
		if serr != nil {
			return sp, serr
		}
		if err != nil || sp.Completed.After(cp.Completed) {
			r.log.Info("a savepoint of the lineage completed after its latest checkpoint", "jobId", job, "savepoint", sp.SavepointPath,
				"savepointCompleted", sp.Completed, "checkpoint", cp.SavepointPath, "checkpointCompleted", cp.Completed)
			sp.Skipped = mergeSkipped(sp.Skipped, cp.Skipped, sp.Completed)
			cp, err = sp, nil
		} else {
			cp.Skipped = mergeSkipped(cp.Skipped, sp.Skipped, cp.Completed)
		}
	}
	return cp, err
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
func (h *Handler) reportVerification(r *review, cp checkpoint.Checkpoint) {
	if cp.Unverified != "" {
		r.log.Info("the checkpoint's state files were not confirmed", "checkpoint", cp.SavepointPath, "why", cp.Unverified)
		r.warn("%s: state files not confirmed (%s)", cp.SavepointPath, cp.Unverified)
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
	r.annotate(map[string]string{AnnotationSkipped: strings.Join(paths, ",")})
	msg := fmt.Sprintf("restoring %s: %d newer completed checkpoint(s) not restorable, skipped: %s", cp.SavepointPath, len(cp.Skipped), strings.Join(reasons, "; "))
	r.log.Warn("newer completed checkpoints are not restorable", "checkpoint", cp.SavepointPath, "skipped", reasons)
	r.warn("%s", msg)
	h.eventWithReason(r, EventReasonCheckpointSkipped, msg)
}

// savepointDir returns the object's savepoint directory when it sets one
// inside the namespace's area; ok is false otherwise (savepoints are then not
// looked for).
func (h *Handler) savepointDir(r *review) (dir checkpoint.Location, ok bool) {
	uri := r.f.conf(flink.SavepointDirKeys)
	if uri == "" {
		return dir, false
	}
	dir, err := checkpoint.ParseLocation(uri)
	if err != nil {
		r.log.Info("unusable savepoint directory: savepoints not considered", "dir", uri, "err", err)
		return dir, false
	}
	if why := h.cfg.checkPrefix(r.namespace, dir); why != "" {
		r.log.Info("savepoint directory outside the namespace's area: savepoints not considered", "dir", dir.String())
		return dir, false
	}
	return dir, true
}

// lookupCheckpoint returns the newest completed checkpoint of the lineage.
func (h *Handler) lookupCheckpoint(ctx context.Context, r *review, dir checkpoint.Location) (checkpoint.Checkpoint, error) {
	if r.jobID == "" {
		return h.cfg.Locator.LatestCompletedInLineage(ctx, dir.String())
	}
	cp, err := h.cfg.Locator.LatestCompleted(ctx, dir.String(), r.jobID)
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return cp, err
	}
	lineage, lerr := h.cfg.Locator.LatestCompletedInLineage(ctx, dir.String())
	switch {
	case lerr == nil && (err != nil || lineage.Completed.After(cp.Completed)):
		r.log.Info("a later job of the lineage checkpointed after the carried job", "jobId", lineage.JobID, "checkpoint", lineage.SavepointPath)
		return lineage, nil
	case lerr != nil && !errors.Is(lerr, checkpoint.ErrNotFound):
		return cp, lerr
	}
	return cp, err
}

// keepUserSavepoint records that the template's initialSavepointPath is kept.
func (h *Handler) keepUserSavepoint(r *review) {
	ann := map[string]string{AnnotationDecision: DecisionKeptUserSavepoint}
	if r.jobID != "" {
		ann[AnnotationFromJobID] = r.jobID
	}
	r.annotate(ann)
}

// checkpointDir returns the object's checkpoint directory, from its
// flinkConfiguration or --default-checkpoint-dir; ok is false when the
// request has been decided (no directory, unusable or outside the prefix).
func (h *Handler) checkpointDir(r *review) (dir checkpoint.Location, ok bool) {
	dirURI := r.f.conf(flink.CheckpointDirKeys)
	if dirURI == "" && h.cfg.DefaultCheckpointDir != "" {
		dirURI = render(h.cfg.DefaultCheckpointDir, r.namespace)
	}
	if dirURI == "" {
		h.missing(r, causeNoCheckpointDir, fmt.Sprintf("spec.flinkConfiguration sets no checkpoint directory (%s): "+
			"if the operator's default configuration sets one, start the webhook with --default-checkpoint-dir", strings.Join(flink.CheckpointDirKeys, ", ")))
		return checkpoint.Location{}, false
	}
	if v := strings.ToLower(r.f.conf(flink.CreateSubdirKeys)); v == "false" {
		h.missing(r, causeNoCheckpointDir, fmt.Sprintf("%s is false: checkpoints are not stored per job id, so job %s's cannot be told apart", flink.CreateSubdirKeys[0], r.jobID))
		return checkpoint.Location{}, false
	}
	dir, err := checkpoint.ParseLocation(dirURI)
	if err != nil {
		r.log.Warn("unusable checkpoint directory", "dir", dirURI, "err", err)
		r.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "cannot restore job %s: %v", r.jobID, err)
		return checkpoint.Location{}, false
	}
	if why := h.cfg.checkPrefix(r.namespace, dir); why != "" {
		r.log.Warn("checkpoint directory outside the namespace's area", "dir", dir.String())
		r.deny(http.StatusForbidden, metav1.StatusReasonForbidden, "refusing to restore job %s: %s", r.jobID, why)
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
func (h *Handler) preferNewer(ctx context.Context, r *review, user string, cp checkpoint.Checkpoint) {
	if spTime, ok := h.savepointCompleted(ctx, r, user); ok && !cp.Completed.IsZero() && !cp.Completed.After(spTime) {
		r.log.Info("the template's initialSavepointPath is not older than the latest checkpoint: keeping it",
			"initialSavepointPath", user, "savepointCompleted", spTime, "checkpoint", cp.SavepointPath, "checkpointCompleted", cp.Completed)
		r.warn("keeping initialSavepointPath %s: it completed at %s, not before the latest checkpoint %s of job %s (%s)",
			user, spTime.UTC().Format(time.RFC3339), cp.SavepointPath, cp.JobID, cp.Completed.UTC().Format(time.RFC3339))
		h.keepUserSavepoint(r)
		return
	}
	r.log.Info("replacing the template's initialSavepointPath with the newer checkpoint (user-savepoint=override)",
		"initialSavepointPath", user, "checkpoint", cp.SavepointPath, "checkpointId", cp.ID)
	h.setRestored(r, cp.SavepointPath, cp.JobID, DecisionRestoredOverUserSavepoint, map[string]string{AnnotationReplacedSavepoint: user})
}

func (h *Handler) savepointCompleted(ctx context.Context, r *review, path string) (t time.Time, ok bool) {
	loc, err := checkpoint.ParseLocation(path)
	if err != nil || h.cfg.checkPrefix(r.namespace, loc) != "" {
		return t, false
	}
	t, err = h.cfg.Locator.CompletedAt(ctx, loc.String())
	if err != nil {
		r.log.Info("cannot read when the template's initialSavepointPath completed", "initialSavepointPath", path, "err", err)
		return t, false
	}
	return t, true
}

// setRestored sets spec.job.initialSavepointPath and, per policy,
// spec.job.upgradeMode, and records the decision. allowNonRestoredState is
// left as it is.
func (h *Handler) setRestored(r *review, path, restoredJobID, decision string, extra map[string]string) {
	r.savepoint = path
	r.upgradeMode = h.upgradeMode(r)
	ann := map[string]string{AnnotationDecision: decision, AnnotationCheckpoint: path}
	if r.jobID != "" {
		ann[AnnotationFromJobID] = r.jobID
	}
	if restoredJobID != "" && restoredJobID != r.jobID {
		ann[AnnotationRestoredJobID] = restoredJobID
	}
	r.annotate(ann)
	r.annotate(extra)
}

func (h *Handler) upgradeMode(r *review) string {
	mode := r.f.Spec.Job.UpgradeMode
	switch {
	case mode == "savepoint" || h.cfg.UpgradeMode == UpgradeModeNever:
		return ""
	case h.cfg.UpgradeMode == UpgradeModeAlways || r.f.conf(flink.SavepointDirKeys) != "":
		return "savepoint"
	}
	if mode == "" {
		mode = "stateless"
	}
	r.warn("upgradeMode left as %s: no savepoint directory (%s) is configured and the operator rejects upgradeMode savepoint without one; the first deployment still restores from initialSavepointPath",
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
func (h *Handler) carryForward(r *review, old *flinkDeployment) {
	f, ann := r.f, old.Metadata.Annotations
	oldPath, decision := old.savepointPath(), ann[AnnotationDecision]
	_, oldJobID, _ := h.marker(old)
	dropped := f.savepointPath() == "" ||
		(decision == DecisionRestoredOverUserSavepoint && f.savepointPath() == ann[AnnotationReplacedSavepoint])
	if f.Spec.Job == nil || !dropped || oldPath == "" || (r.jobID != "" && r.jobID != oldJobID) ||
		(decision != DecisionRestored && decision != DecisionRestoredOverUserSavepoint && decision != DecisionRestoredLineage) ||
		ann[AnnotationCheckpoint] != oldPath || !h.cfg.Trust.Trusted(r.req.UserInfo) {
		return
	}
	loc, err := checkpoint.ParseLocation(oldPath)
	if err != nil || h.cfg.checkPrefix(r.namespace, loc) != "" {
		return
	}
	r.log.Info("update from Karmada dropped the restored initialSavepointPath; carrying it forward", "checkpoint", oldPath)
	extra := map[string]string{}
	if decision == DecisionRestoredOverUserSavepoint {
		extra[AnnotationReplacedSavepoint] = ann[AnnotationReplacedSavepoint]
	}
	if r.jobID == "" && ann[AnnotationFromJobID] != "" {
		extra[AnnotationFromJobID] = ann[AnnotationFromJobID]
	}
	h.setRestored(r, oldPath, ann[AnnotationRestoredJobID], decision, extra)
}
