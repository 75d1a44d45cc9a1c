package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/karmada-failover/lab/restore/checkpoint"
)

const (
	oldJob  = "44cc5573945d1d4925732d915c70b9ac"
	ckptDir = "s3://flink-checkpoints/team-a/wordcount"
	chk12   = ckptDir + "/" + oldJob + "/chk-12"

	// failoverTime is the marker's failover.karmada.io/time; testNow is two
	// minutes later, inside the default five-minute grace period.
	failoverTime = "2026-12-01T10:00:00Z"
	// expiredTime is a failover whose grace period is over at testNow.
	expiredTime = "2026-12-01T09:00:00Z"
)

var (
	testNow      = time.Date(2026, 12, 1, 10, 2, 0, 0, time.UTC)
	chk12Written = time.Date(2026, 12, 1, 9, 59, 30, 0, time.UTC)
)

// fakeLocator answers from maps "dir|jobId" -> checkpoint or error, and
// snapshot path -> completion time.
type fakeLocator struct {
	mu        sync.Mutex
	results   map[string]checkpoint.Checkpoint
	errs      map[string]error
	completed map[string]time.Time
	calls     []string
	statCalls []string
	// lineageCalls are the directories LatestCompletedInLineage was asked for.
	lineageCalls []string
	// savepointCalls are the "<dir>|savepoint|<jobId>" LatestSavepoint was asked for.
	savepointCalls []string
}

func (f *fakeLocator) LatestCompleted(_ context.Context, dir, jobID string) (checkpoint.Checkpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := dir + "|" + jobID
	f.calls = append(f.calls, k)
	if err, ok := f.errs[k]; ok {
		return checkpoint.Checkpoint{}, err
	}
	if cp, ok := f.results[k]; ok {
		return cp, nil
	}
	return checkpoint.Checkpoint{}, fmt.Errorf("%w under %s", checkpoint.ErrNotFound, dir)
}

// LatestCompletedInLineage answers the newest of the results under dir (or
// the first error under dir).
func (f *fakeLocator) LatestCompletedInLineage(_ context.Context, dir string) (checkpoint.Checkpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lineageCalls = append(f.lineageCalls, dir)
	for k, err := range f.errs {
		if strings.HasPrefix(k, dir+"|") {
			return checkpoint.Checkpoint{}, err
		}
	}
	var best checkpoint.Checkpoint
	found := false
	for k, cp := range f.results {
		job, under := strings.CutPrefix(k, dir+"|")
		if !under {
			continue
		}
		if cp.JobID == "" {
			cp.JobID = job
		}
		if !found || cp.Completed.After(best.Completed) {
			best, found = cp, true
		}
	}
	if !found {
		return checkpoint.Checkpoint{}, fmt.Errorf("%w of any job under %s", checkpoint.ErrNotFound, dir)
	}
	return best, nil
}

// LatestSavepoint answers from results under "<savepointDir>|savepoint|<jobId>".
func (f *fakeLocator) LatestSavepoint(_ context.Context, dir, jobID string) (checkpoint.Checkpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := dir + "|savepoint|" + jobID
	f.savepointCalls = append(f.savepointCalls, k)
	if err, ok := f.errs[k]; ok {
		return checkpoint.Checkpoint{}, err
	}
	if cp, ok := f.results[k]; ok {
		return cp, nil
	}
	return checkpoint.Checkpoint{}, fmt.Errorf("%w: no savepoint under %s", checkpoint.ErrNotFound, dir)
}

func (f *fakeLocator) CompletedAt(_ context.Context, path string) (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statCalls = append(f.statCalls, path)
	if t, ok := f.completed[path]; ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%w: %s", checkpoint.ErrNotFound, path)
}

func newFakeLocator() *fakeLocator {
	return &fakeLocator{
		results: map[string]checkpoint.Checkpoint{
			ckptDir + "|" + oldJob: {ID: 12, SavepointPath: chk12, Completed: chk12Written},
		},
		errs: map[string]error{
			"s3://flink-checkpoints/team-a/broken|" + oldJob:  errors.New("operation error S3: ListObjectsV2, https response error StatusCode: 500"),
			"s3://flink-checkpoints/team-a/invalid|" + oldJob: fmt.Errorf("%w: S3 locations are not configured", checkpoint.ErrInvalid),
		},
		completed: map[string]time.Time{},
	}
}

var (
	karmadaSA = authenticationv1.UserInfo{
		Username: "system:serviceaccount:karmada-cluster:karmada-member2",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:karmada-cluster", "system:authenticated"},
	}
	// otherClusterSA is another ServiceAccount in karmada-cluster: trusted by
	// the old group default, not by the exact identity.
	otherClusterSA = authenticationv1.UserInfo{
		Username: "system:serviceaccount:karmada-cluster:backup-operator",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:karmada-cluster", "system:authenticated"},
	}
	impersonatorSA = authenticationv1.UserInfo{
		Username: "system:serviceaccount:karmada-cluster:karmada-impersonator",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:karmada-cluster", "system:authenticated"},
	}
	agentSA = authenticationv1.UserInfo{
		Username: "system:serviceaccount:karmada-system:karmada-agent-sa",
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:karmada-system", "system:authenticated"},
	}
	alice = authenticationv1.UserInfo{Username: "alice", Groups: []string{"team-a", "system:authenticated"}}
	admin = authenticationv1.UserInfo{Username: "kubernetes-admin", Groups: []string{"kubeadm:cluster-admins", "system:authenticated"}}
)

// fd builds a FlinkDeployment. labels/annotations nil = field absent.
// job: nil = no spec.job.
func fd(labels, annotations map[string]string, conf map[string]any, job map[string]any) []byte {
	meta := map[string]any{"name": "wordcount", "namespace": "team-a"}
	if labels != nil {
		meta["labels"] = labels
	}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	spec := map[string]any{
		"image":              "flink:1.20",
		"flinkVersion":       "v1_20",
		"flinkConfiguration": conf,
		"serviceAccount":     "flink",
	}
	if job != nil {
		spec["job"] = job
	}
	b, err := json.Marshal(map[string]any{
		"apiVersion": "flink.apache.org/v1beta1", "kind": "FlinkDeployment", "metadata": meta, "spec": spec,
	})
	if err != nil {
		panic(err)
	}
	return b
}

// with returns m with pairs set ("" deletes).
func with[V any](m map[string]V, pairs ...any) map[string]V {
	for i := 0; i+1 < len(pairs); i += 2 {
		k := pairs[i].(string)
		if s, ok := pairs[i+1].(string); ok && s == "" {
			delete(m, k)
			continue
		}
		m[k] = pairs[i+1].(V)
	}
	return m
}

func marker(extra ...any) map[string]string {
	return with(map[string]string{workv1alpha2.FailoverReasonLabel: "ClusterFailure", DefaultJobIDKey: oldJob, "app": "wordcount"}, extra...)
}

func karmadaAnn(extra ...any) map[string]string {
	return with(map[string]string{workv1alpha2.FailoverFromAnnotation: "member1", workv1alpha2.FailoverTimeAnnotation: failoverTime, workv1alpha2.FailoverPreservedKeysAnnotation: DefaultJobIDKey}, extra...)
}

func expiredAnn(extra ...any) map[string]string {
	return karmadaAnn(append([]any{workv1alpha2.FailoverTimeAnnotation, expiredTime}, extra...)...)
}

func conf(dir string, extra ...any) map[string]any {
	m := map[string]any{"taskmanager.numberOfTaskSlots": "2", "state.savepoints.dir": "s3://flink-checkpoints/team-a/wordcount-sp"}
	if dir != "" {
		m["state.checkpoints.dir"] = dir
	}
	return with(m, extra...)
}

func job(extra ...any) map[string]any {
	return with(map[string]any{"jarURI": "local:///opt/flink/usrlib/job.jar", "upgradeMode": "last-state", "state": "running", "allowNonRestoredState": true}, extra...)
}

// eventLog records Events.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (e *eventLog) Event(obj runtime.Object, eventtype, reason, message string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ref := obj.(*corev1.ObjectReference)
	e.events = append(e.events, fmt.Sprintf("%s %s %s/%s/%s: %s", eventtype, reason, ref.Kind, ref.Namespace, ref.Name, message))
}

func (e *eventLog) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.events...)
}

// testConfig trusts Karmada's Push-mode identity for member2, accepts
// anonymous callers and runs at testNow.
func testConfig(loc checkpoint.Locator, events EventRecorder) Config {
	return Config{
		Trust: Trust{
			Usernames:         []string{karmadaSA.Username},
			ExcludedUsernames: []string{DefaultUntrustedUsername},
		},
		PrefixTemplate: DefaultPrefixTemplate,
		Locator:        loc,
		Auth:           CallerAuth{AllowAnonymous: []string{EndpointMutate, EndpointLocate}, RatePerSecond: -1},
		Events:         events,
		Now:            func() time.Time { return testNow },
	}
}

func newTestHandler(t *testing.T, loc checkpoint.Locator, mod func(*Config)) (*Handler, *eventLog) {
	t.Helper()
	events := &eventLog{}
	cfg := testConfig(loc, events)
	if mod != nil {
		mod(&cfg)
	}
	h, err := NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h, events
}

func admissionRequest(op admissionv1.Operation, user authenticationv1.UserInfo, object, oldObject []byte) *admissionv1.AdmissionRequest {
	if op == "" {
		op = admissionv1.Create
	}
	req := &admissionv1.AdmissionRequest{
		UID:       "6f1c6a1e-0000-4000-8000-000000000001",
		Kind:      metav1.GroupVersionKind{Group: "flink.apache.org", Version: "v1beta1", Kind: "FlinkDeployment"},
		Resource:  metav1.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinkdeployments"},
		Name:      "wordcount",
		Namespace: "team-a",
		Operation: op,
		UserInfo:  user,
		Object:    runtime.RawExtension{Raw: object},
	}
	if oldObject != nil {
		req.OldObject = runtime.RawExtension{Raw: oldObject}
	}
	return req
}

// admitted is the response to an admission request, with the object the request carried.
type admitted struct {
	*admissionv1.AdmissionResponse
	object []byte
}

// patched returns the request's object with the response's patch applied.
func (a *admitted) patched(t *testing.T) map[string]any {
	t.Helper()
	return applyPatch(t, a.object, string(a.Patch))
}

// applyPatch applies a JSON patch ("" for none) to an object.
func applyPatch(t *testing.T, object []byte, patch string) map[string]any {
	t.Helper()
	out := object
	if patch != "" {
		p, err := jsonpatch.DecodePatch([]byte(patch))
		if err != nil {
			t.Fatalf("decoding patch %s: %v", patch, err)
		}
		if out, err = p.Apply(object); err != nil {
			t.Fatalf("applying patch %s: %v", patch, err)
		}
	}
	obj := map[string]any{}
	if err := json.Unmarshal(out, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// roundTrip sends the request as an AdmissionReview through the HTTP handler, as the API
// server does.
func roundTrip(t *testing.T, h http.Handler, req *admissionv1.AdmissionRequest) *admitted {
	t.Helper()
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	hr := httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(body))
	hr.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, hr)
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body.String())
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil {
		t.Fatal(err)
	}
	if review.APIVersion != "admission.k8s.io/v1" || review.Kind != "AdmissionReview" || review.Response == nil {
		t.Fatalf("bad review: %s", rec.Body.String())
	}
	if review.Response.UID != req.UID {
		t.Errorf("UID = %q, want %q", review.Response.UID, req.UID)
	}
	return &admitted{AdmissionResponse: review.Response, object: req.Object.Raw}
}

// expect is what an admission response should be.
type expect struct {
	allowed bool
	code    int32  // when denied
	message string // substring of the deny message
	patch   string // JSON patch with the same result on the object; "" = no patch
	warning string // substring of one warning; "" = no warnings
	events  int    // Warning Events emitted
}

func (w expect) check(t *testing.T, resp *admitted, events []string) {
	t.Helper()
	if resp.Allowed != w.allowed {
		t.Fatalf("allowed = %v, want %v (result %+v)", resp.Allowed, w.allowed, resp.Result)
	}
	if !w.allowed {
		if resp.Result == nil || resp.Result.Code != w.code || !strings.Contains(resp.Result.Message, w.message) {
			t.Errorf("result = %+v, want code %d and message containing %q", resp.Result, w.code, w.message)
		}
		if resp.Patch != nil {
			t.Errorf("denied response carries a patch: %s", resp.Patch)
		}
	}
	switch {
	case w.patch == "" && len(resp.Patch) > 0:
		t.Errorf("unexpected patch %s", resp.Patch)
	case w.patch != "":
		if got, want := resp.patched(t), applyPatch(t, resp.object, w.patch); !reflect.DeepEqual(got, want) {
			t.Errorf("patch %s gives\n  %v\nwant (%s)\n  %v", resp.Patch, got, w.patch, want)
		}
	}
	if w.patch != "" && (resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch) {
		t.Errorf("patchType = %v, want JSONPatch", resp.PatchType)
	}
	if w.warning == "" && len(resp.Warnings) > 0 {
		t.Errorf("unexpected warnings %q", resp.Warnings)
	}
	if w.warning != "" && !strings.Contains(strings.Join(resp.Warnings, "\n"), w.warning) {
		t.Errorf("warnings %q do not contain %q", resp.Warnings, w.warning)
	}
	if len(events) != w.events {
		t.Errorf("events = %q, want %d", events, w.events)
	}
}

// annOps is the JSON patch of annotation adds, in key order, for an object
// that has annotations.
func annOps(pairs ...string) string {
	var ops []string
	for i := 0; i+1 < len(pairs); i += 2 {
		ops = append(ops, fmt.Sprintf(`{"op":"add","path":"/metadata/annotations/%s","value":%q}`, escapePointer(pairs[i]), pairs[i+1]))
	}
	return strings.Join(ops, ",")
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func patch(ops ...string) string { return "[" + strings.Join(ops, ",") + "]" }

const (
	setChk12     = `{"op":"add","path":"/spec/job/initialSavepointPath","value":"` + chk12 + `"}`
	setSavepoint = `{"op":"add","path":"/spec/job/upgradeMode","value":"savepoint"}`
)

var (
	restoredAnnOps = annOps(AnnotationCheckpoint, chk12, AnnotationDecision, DecisionRestored, AnnotationFromJobID, oldJob)
	restorePatch   = patch(setChk12, setSavepoint, restoredAnnOps)
	// lineagePatch restores the newest checkpoint under the directory when no
	// job id is carried.
	lineagePatch = patch(setChk12, setSavepoint,
		annOps(AnnotationCheckpoint, chk12, AnnotationDecision, DecisionRestoredLineage, AnnotationRestoredJobID, oldJob))
)

// decisionPatch is the patch of an object admitted with only a decision.
func decisionPatch(decision string, withJobID bool) string {
	if !withJobID {
		return patch(annOps(AnnotationDecision, decision))
	}
	return patch(annOps(AnnotationDecision, decision, AnnotationFromJobID, oldJob))
}
