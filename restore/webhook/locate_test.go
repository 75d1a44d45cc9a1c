package webhook

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karmada-failover/lab/restore/checkpoint"
)

func locate(t *testing.T, h http.Handler, method string, q url.Values) (int, LocateResponse, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, "/locate?"+q.Encode(), nil))
	var body LocateResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body is not JSON: %q", rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	return rec.Code, body, rec.Body.String()
}

func TestLocateLookup(t *testing.T) {
	h, _ := newTestHandler(t, newFakeLocator(), nil)
	q := func(ns, dir, job string) url.Values {
		return url.Values{"namespace": {ns}, "checkpointDir": {dir}, "jobId": {job}}
	}
	code, body, raw := locate(t, h, http.MethodGet, q("team-a", ckptDir+"/", oldJob))
	if code != 200 || !reflect.DeepEqual(body, LocateResponse{SavepointPath: chk12, CheckpointID: 12}) {
		t.Fatalf("found: %d %s", code, raw)
	}
	if raw != `{"savepointPath":"`+chk12+`","checkpointId":12}`+"\n" {
		t.Errorf("exact body = %q", raw)
	}
	for _, c := range []struct {
		name   string
		method string
		q      url.Values
		code   int
		errSub string
	}{
		{"none", http.MethodGet, q("team-a", "s3://flink-checkpoints/team-a/empty", oldJob), 404, "no completed checkpoint"},
		{"other namespace", http.MethodGet, q("team-a", "s3://flink-checkpoints/team-b/x", oldJob), 403, "outside the area"},
		{"look-alike namespace", http.MethodGet, q("team-a", "s3://flink-checkpoints/team-ab/x", oldJob), 403, "outside the area"},
		{"namespace with a path", http.MethodGet, q("team-a/../team-b", "s3://flink-checkpoints/team-b/x", oldJob), 400, "namespace"},
		{"missing param", http.MethodGet, q("team-a", "", oldJob), 400, "required"},
		{"bad job id", http.MethodGet, q("team-a", ckptDir, "zz"), 400, "32 hex"},
		{"bad dir", http.MethodGet, q("team-a", "hdfs://x/y", oldJob), 400, "unsupported scheme"},
		{"store error", http.MethodGet, q("team-a", "s3://flink-checkpoints/team-a/broken", oldJob), 503, "lookup failed"},
		{"PUT", http.MethodPut, q("team-a", ckptDir, oldJob), 405, "GET"},
	} {
		code, body, raw := locate(t, h, c.method, c.q)
		if code != c.code || !strings.Contains(body.Error, c.errSub) || body.SavepointPath != "" {
			t.Errorf("%s: %d %s, want %d with error containing %q", c.name, code, raw, c.code, c.errSub)
		}
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != 200 || rec.Body.String() != "ok" {
		t.Errorf("healthz: %d %q", rec.Code, rec.Body.String())
	}
}

// decideViaLocate posts the request to /locate as the Kyverno policy does.
func decideViaLocate(t *testing.T, h http.Handler, user authenticationv1.UserInfo, object []byte, dryRun bool) (int, LocateDecision) {
	t.Helper()
	// As the policy sends a CREATE: no old object, {}.
	return decideViaLocateOp(t, h, admissionv1.Create, user, object, []byte("{}"), dryRun)
}

// decideViaLocateOp posts a review of operation op, as Kyverno's apiCall does.
func decideViaLocateOp(t *testing.T, h http.Handler, op admissionv1.Operation, user authenticationv1.UserInfo, object, oldObject []byte, dryRun bool) (int, LocateDecision) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"operation": op, "namespace": "team-a", "userInfo": user,
		"object": json.RawMessage(object), "oldObject": json.RawMessage(oldObject), "dryRun": dryRun})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/locate", bytes.NewReader(body)))
	var out LocateDecision
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("body is not JSON: %q", rec.Body.String())
	}
	for _, field := range []string{`"decision":`, `"savepointPath":`, `"upgradeMode":`, `"annotations":{`, `"warnings":[`} {
		if !strings.Contains(rec.Body.String(), field) {
			t.Errorf("body %s lacks %s (the policy's JMESPath must never see null)", rec.Body.String(), field)
		}
	}
	return rec.Code, out
}

// TestLocateDecision: POST /locate makes the decisions /mutate makes, as
// fields the Kyverno policy applies.
func TestLocateDecision(t *testing.T) {
	cases := []struct {
		name   string
		user   authenticationv1.UserInfo
		object []byte
		code   int
		want   LocateDecision // Error: substring
		events int
	}{
		{
			name: "restored", user: karmadaSA, object: fd(marker(), karmadaAnn(), conf(ckptDir), job()), code: 200,
			want: LocateDecision{Decision: DecisionRestored, SavepointPath: chk12, UpgradeMode: "savepoint",
				Annotations: map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: chk12, AnnotationFromJobID: oldJob}},
		},
		{
			name: "no savepoint dir: path only", user: karmadaSA, object: fd(marker(), karmadaAnn(), conf(ckptDir, "state.savepoints.dir", ""), job()), code: 200,
			want: LocateDecision{Decision: DecisionRestored, SavepointPath: chk12,
				Annotations: map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: chk12, AnnotationFromJobID: oldJob}},
		},
		{
			name: "no checkpoint, within the grace period: denied", user: karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-a/empty"), job()), code: 404,
			want: LocateDecision{Error: "denied until 2026-12-01T10:05:00Z"},
		},
		{
			name: "store error: denied", user: karmadaSA,
			object: fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-a/broken"), job()), code: 503,
			want: LocateDecision{Error: "failed"},
		},
		{
			name: "no checkpoint after the grace period: annotations only, never an empty path", user: karmadaSA,
			object: fd(marker(), expiredAnn(), conf("s3://flink-checkpoints/team-a/empty"), job()), code: 200, events: 1,
			want: LocateDecision{Decision: DecisionNoCheckpoint, Annotations: map[string]string{AnnotationDecision: DecisionNoCheckpoint, AnnotationFromJobID: oldJob}},
		},
		{
			name: "untrusted requester: denied", user: alice, object: fd(marker(), karmadaAnn(), conf(ckptDir), job()), code: 403,
			want: LocateDecision{Error: "honoured only from Karmada's identity"},
		},
		{
			name: "job id only as an annotation", user: karmadaSA,
			object: fd(marker(DefaultJobIDKey, ""), karmadaAnn(DefaultJobIDKey, oldJob), conf(ckptDir), job()), code: 200,
			want: LocateDecision{Decision: DecisionRestored, SavepointPath: chk12, UpgradeMode: "savepoint",
				Annotations: map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: chk12, AnnotationFromJobID: oldJob}},
		},
		{
			name: "no marker: nothing to do", user: karmadaSA, object: fd(map[string]string{"app": "x"}, nil, conf(ckptDir), job()), code: 200,
			want: LocateDecision{Annotations: map[string]string{}},
		},
		{
			name: "not a FlinkDeployment", user: karmadaSA, object: []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`), code: 400,
			want: LocateDecision{Error: "must be a flink.apache.org FlinkDeployment"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, events := newTestHandler(t, newFakeLocator(), nil)
			code, got := decideViaLocate(t, h, c.user, c.object, false)
			if code != c.code {
				t.Fatalf("HTTP %d, want %d: %+v", code, c.code, got)
			}
			if c.want.Error != "" {
				if !strings.Contains(got.Error, c.want.Error) || got.SavepointPath != "" || got.Decision != "" {
					t.Errorf("got %+v, want error containing %q", got, c.want.Error)
				}
				return
			}
			if got.Decision != c.want.Decision || got.SavepointPath != c.want.SavepointPath || got.UpgradeMode != c.want.UpgradeMode ||
				!maps.Equal(got.Annotations, c.want.Annotations) || got.Error != "" {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			if len(events.list()) != c.events {
				t.Errorf("events %q, want %d", events.list(), c.events)
			}
		})
	}
	t.Run("dry run emits no event", func(t *testing.T) {
		h, events := newTestHandler(t, newFakeLocator(), nil)
		if code, _ := decideViaLocate(t, h, karmadaSA, fd(marker(), expiredAnn(), conf("s3://flink-checkpoints/team-a/empty"), job()), true); code != 200 || len(events.list()) != 0 {
			t.Errorf("HTTP %d, events %q", code, events.list())
		}
	})
	t.Run("UPDATE without the old object", func(t *testing.T) {
		h, _ := newTestHandler(t, newFakeLocator(), nil)
		code, got := decideViaLocateOp(t, h, admissionv1.Update, karmadaSA, fd(marker(), karmadaAnn(), conf(ckptDir), job()), []byte("{}"), false)
		if code != 400 || !strings.Contains(got.Error, "oldObject") {
			t.Errorf("HTTP %d %+v, want 400 naming oldObject", code, got)
		}
	})
	t.Run("UPDATE with another object's old version", func(t *testing.T) {
		h, _ := newTestHandler(t, newFakeLocator(), nil)
		other := bytes.Replace(fd(marker(), karmadaAnn(), conf(ckptDir), job()), []byte(`"name":"wordcount"`), []byte(`"name":"other"`), 1)
		code, got := decideViaLocateOp(t, h, admissionv1.Update, karmadaSA, fd(marker(), karmadaAnn(), conf(ckptDir), job()), other, false)
		if code != 400 || !strings.Contains(got.Error, "not the object before this UPDATE") {
			t.Errorf("HTTP %d %+v, want 400", code, got)
		}
	})
	t.Run("DELETE", func(t *testing.T) {
		h, _ := newTestHandler(t, newFakeLocator(), nil)
		code, got := decideViaLocateOp(t, h, admissionv1.Delete, karmadaSA, fd(marker(), karmadaAnn(), conf(ckptDir), job()), []byte("{}"), false)
		if code != 400 || !strings.Contains(got.Error, "CREATE and UPDATE") {
			t.Errorf("HTTP %d %+v, want 400", code, got)
		}
	})
	t.Run("bad body", func(t *testing.T) {
		h, _ := newTestHandler(t, newFakeLocator(), nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/locate", strings.NewReader("{")))
		if rec.Code != 400 {
			t.Errorf("HTTP %d", rec.Code)
		}
	})
}

// TestLocateMatchesMutate: for the same object, POST /locate and /mutate
// decide the same (Kyverno and the webhook follow one policy).
func TestLocateMatchesMutate(t *testing.T) {
	objects := map[string][]byte{
		"restored":       fd(marker(), karmadaAnn(), conf(ckptDir), job()),
		"user savepoint": fd(marker(), karmadaAnn(), conf(ckptDir), job("initialSavepointPath", staleSP)),
		"no savepoint":   fd(marker(), karmadaAnn(), conf(ckptDir, "state.savepoints.dir", ""), job("upgradeMode", "stateless")),
		"none, expired":  fd(marker(), expiredAnn(), conf("s3://flink-checkpoints/team-a/empty"), job()),
		"none":           fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-a/empty"), job()),
		"no job id":      fd(marker(DefaultJobIDKey, ""), expiredAnn(), conf(ckptDir), job()),
		"no dir":         fd(marker(), karmadaAnn(), conf(""), job()),
		"outside":        fd(marker(), karmadaAnn(), conf("s3://flink-checkpoints/team-b/x"), job()),
	}
	restoredOld := fd(marker(), map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: chk12, AnnotationFromJobID: oldJob,
		workv1alpha2.FailoverPreservedKeysAnnotation: DefaultJobIDKey}, conf(ckptDir), job("initialSavepointPath", chk12, "upgradeMode", "savepoint"))
	type pair struct{ object, old []byte }
	updates := map[string]pair{
		"UPDATE, marker newly present":           {fd(marker(), karmadaAnn(), conf(ckptDir), job()), fd(map[string]string{"app": "wordcount"}, nil, conf(ckptDir), job())},
		"UPDATE, marker already present":         {fd(marker(), karmadaAnn(), conf(ckptDir), job()), fd(marker(), karmadaAnn(), conf(ckptDir), job())},
		"UPDATE dropping the restored path":      {fd(marker(), karmadaAnn(), conf(ckptDir), job()), restoredOld},
		"UPDATE keeping the restored path":       {fd(marker(), karmadaAnn(), conf(ckptDir), job("initialSavepointPath", chk12)), restoredOld},
		"UPDATE, forged restored path elsewhere": {fd(marker(), karmadaAnn(), conf(ckptDir), job()), fd(marker(), map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: "s3://flink-checkpoints/team-b/x/chk-1"}, conf(ckptDir), job("initialSavepointPath", "s3://flink-checkpoints/team-b/x/chk-1"))},
	}
	cases := map[string]pair{}
	for name, obj := range objects {
		cases[name] = pair{obj, nil}
	}
	maps.Copy(cases, updates)
	for name, c := range cases {
		for _, user := range []authenticationv1.UserInfo{karmadaSA, alice} {
			t.Run(name+"/"+user.Username, func(t *testing.T) {
				h, _ := newTestHandler(t, newFakeLocator(), nil)
				op, old := admissionv1.Create, []byte("{}")
				if c.old != nil {
					op, old = admissionv1.Update, c.old
				}
				resp := roundTrip(t, h, admissionRequest(op, user, c.object, c.old))
				code, dec := decideViaLocateOp(t, h, op, user, c.object, old, false)
				if !resp.Allowed {
					if code != int(resp.Result.Code) || dec.Error != resp.Result.Message {
						t.Errorf("/mutate denied %d %q, /locate %d %q", resp.Result.Code, resp.Result.Message, code, dec.Error)
					}
					return
				}
				if code != 200 {
					t.Fatalf("/mutate admitted, /locate %d %+v", code, dec)
				}
				// /locate's decision applied to the object gives what /mutate's patch gives.
				want := applyPatch(t, resp.object, "")
				if dec.SavepointPath != "" {
					_ = unstructured.SetNestedField(want, dec.SavepointPath, "spec", "job", "initialSavepointPath")
				}
				if dec.UpgradeMode != "" {
					_ = unstructured.SetNestedField(want, dec.UpgradeMode, "spec", "job", "upgradeMode")
				}
				if len(dec.Annotations) > 0 {
					annotations, _, _ := unstructured.NestedStringMap(want, "metadata", "annotations")
					if annotations == nil {
						annotations = map[string]string{}
					}
					maps.Copy(annotations, dec.Annotations)
					_ = unstructured.SetNestedStringMap(want, annotations, "metadata", "annotations")
				}
				if got := resp.patched(t); !reflect.DeepEqual(got, want) {
					t.Errorf("/mutate gives\n  %v\n/locate\n  %v", got, want)
				}
			})
		}
	}
}

// TestEndToEndFileStore wires the real checkpoint.Store (file://) into the
// handler: admission and /locate agree on the same chk-N, also for
// directories whose names hold "?", "#", "%" and control characters, and an
// UPDATE from Karmada carries the restored path forward.
func TestEndToEndFileStore(t *testing.T) {
	for _, sub := range []string{"wordcount", "a?b#c%d", "ctl\x01x", "100%25"} {
		t.Run(sub, func(t *testing.T) {
			root := t.TempDir()
			base := filepath.Join(root, "team-a", sub)
			for _, rel := range []string{"chk-3/_metadata", "chk-9/_metadata", "chk-10/_metadata", "chk-11/state"} {
				p := filepath.Join(base, oldJob, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			h, _ := newTestHandler(t, &checkpoint.Store{AllowFile: true}, func(c *Config) {
				c.PrefixTemplate = "file://" + root + "/{namespace}/"
			})
			dir := "file://" + base
			want := dir + "/" + oldJob + "/chk-10"

			code, body, raw := locate(t, h, http.MethodGet, url.Values{"namespace": {"team-a"}, "checkpointDir": {dir}, "jobId": {oldJob}})
			if code != 200 || body.SavepointPath != want || body.CheckpointID != 10 {
				t.Fatalf("locate: %d %s", code, raw)
			}

			spConf := conf(dir, "state.savepoints.dir", "file://"+root+"/sp")
			resp := roundTrip(t, h, admissionRequest("", karmadaSA, fd(marker(), map[string]string{workv1alpha2.FailoverPreservedKeysAnnotation: DefaultJobIDKey}, spConf, job()), nil))
			wantPatch := patch(`{"op":"add","path":"/spec/job/initialSavepointPath","value":`+jsonString(want)+`}`, setSavepoint,
				`{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1checkpoint","value":`+jsonString(want)+`}`,
				`{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1decision","value":"restored"}`,
				`{"op":"add","path":"/metadata/annotations/restore.lab.karmada.io~1from-job-id","value":"`+oldJob+`"}`)
			expect{allowed: true, patch: wantPatch}.check(t, resp, nil)

			// Karmada re-applies the template before the operator deployed it.
			restored := fd(marker(), map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: want, AnnotationFromJobID: oldJob},
				spConf, job("initialSavepointPath", want, "upgradeMode", "savepoint"))
			resp = roundTrip(t, h, admissionRequest(admissionv1.Update, karmadaSA, fd(marker(), nil, spConf, job()), restored))
			if !resp.Allowed {
				t.Fatalf("carry-forward: denied %+v", resp.Result)
			}
			if got, _, _ := unstructured.NestedString(resp.patched(t), "spec", "job", "initialSavepointPath"); got != want {
				t.Fatalf("carry-forward: initialSavepointPath %q, want %q (patch %s)", got, want, resp.Patch)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
