package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"

	corev1 "k8s.io/api/core/v1"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/karmada-failover/lab/apis/flink"
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

// review is one admission request and its decision, rendered as a JSON patch
// for /mutate or as JSON for POST /locate.
type review struct {
	*decision
	req *admissionv1.AdmissionRequest
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

// maxStoreQuestions bounds the store questions of one decision (it asks at
// most five: the carried job's latest checkpoint, the lineage's, two jobs'
// savepoints and the template savepoint's completion time).
const maxStoreQuestions = 8

// decide reads the request, answers the decision's store questions with the
// Locator (within LookupTimeout), and writes the decision's log lines and
// Events.
func (h *Handler) decide(ctx context.Context, req *admissionv1.AdmissionRequest) *review {
	r := &review{decision: &decision{}, req: req}
	if req.Resource.Group != flink.Group || req.Resource.Resource != flink.Resource || req.SubResource != "" {
		return r
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return r
	}
	in := &decisionInput{op: req.Operation, namespace: req.Namespace, user: req.UserInfo, obj: &flinkDeployment{},
		now: h.cfg.Now(), store: map[storeQuery]storeAnswer{}}
	if err := json.Unmarshal(req.Object.Raw, in.obj); err != nil {
		r.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "decoding FlinkDeployment: %v", err)
		return r
	}
	if in.obj.Metadata.Name == "" {
		in.obj.Metadata.Name = req.Name
	}
	if reason, _, _ := h.cfg.marker(in.obj); reason == "" {
		return r // not a failover re-creation: unchanged
	}
	if in.namespace == "" {
		in.namespace = in.obj.Metadata.Namespace
	}
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		in.old = &flinkDeployment{}
		if err := json.Unmarshal(req.OldObject.Raw, in.old); err != nil {
			r.deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, "decoding old FlinkDeployment: %v", err)
			return r
		}
	}

	var lctx context.Context
	for asked := 0; ; asked++ {
		r.decision = h.cfg.decide(in)
		if r.need == nil {
			break
		}
		if asked == maxStoreQuestions {
			r.decision = &decision{reason: r.reason, jobID: r.jobID}
			r.deny(http.StatusInternalServerError, metav1.StatusReasonInternalError, "the restore decision asked the checkpoint store more than %d questions", maxStoreQuestions)
			break
		}
		if lctx == nil {
			var cancel context.CancelFunc
			lctx, cancel = context.WithTimeout(ctx, h.cfg.LookupTimeout)
			defer cancel()
		}
		in.store[*r.need] = h.answer(lctx, *r.need)
	}

	log := h.cfg.Logger.With("namespace", in.namespace, "name", in.obj.Metadata.Name, "uid", req.UID,
		"operation", req.Operation, "user", req.UserInfo.Username, "reason", r.reason, "jobId", r.jobID)
	for _, l := range r.logs {
		log.Log(ctx, l.level, l.msg, l.args...)
	}
	if h.cfg.Events != nil && (req.DryRun == nil || !*req.DryRun) {
		// On CREATE the object has no uid yet, so the Event names it by kind,
		// namespace and name only: kubectl events --for flinkdeployment/<name> shows it.
		ref := &corev1.ObjectReference{APIVersion: flink.GroupVersion.String(), Kind: flink.Kind,
			Namespace: in.namespace, Name: in.obj.Metadata.Name, UID: in.obj.Metadata.UID}
		for _, e := range r.events {
			h.cfg.Events.Event(ref, corev1.EventTypeWarning, e.reason, e.msg)
		}
	}
	return r
}

// answer asks the Locator the decision's store question.
func (h *Handler) answer(ctx context.Context, q storeQuery) storeAnswer {
	var a storeAnswer
	switch q.kind {
	case queryLatest:
		a.cp, a.err = h.cfg.Locator.LatestCompleted(ctx, q.dir, q.job)
	case queryLineage:
		a.cp, a.err = h.cfg.Locator.LatestCompletedInLineage(ctx, q.dir)
	case querySavepoint:
		a.cp, a.err = h.cfg.Locator.LatestSavepoint(ctx, q.dir, q.job)
	case queryCompletedAt:
		a.completed, a.err = h.cfg.Locator.CompletedAt(ctx, q.dir)
	default:
		a.err = fmt.Errorf("unknown store question %d", q.kind)
	}
	return a
}
