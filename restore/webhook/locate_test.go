package webhook

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

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

func TestLocate(t *testing.T) {
	h, err := NewHandler(Config{PrefixTemplate: DefaultPrefixTemplate, Locator: newFakeLocator()})
	if err != nil {
		t.Fatal(err)
	}
	q := func(ns, dir, job string) url.Values {
		return url.Values{"namespace": {ns}, "checkpointDir": {dir}, "jobId": {job}}
	}
	code, body, raw := locate(t, h, http.MethodGet, q("team-a", ckptDir+"/", oldJob))
	if code != 200 || body != (LocateResponse{SavepointPath: chk12, CheckpointID: 12}) {
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
		{"missing param", http.MethodGet, q("team-a", "", oldJob), 400, "required"},
		{"bad job id", http.MethodGet, q("team-a", ckptDir, "zz"), 400, "32 hex"},
		{"bad dir", http.MethodGet, q("team-a", "hdfs://x/y", oldJob), 400, "unsupported scheme"},
		{"store error", http.MethodGet, q("team-a", "s3://flink-checkpoints/team-a/broken", oldJob), 503, "lookup failed"},
		{"POST", http.MethodPost, q("team-a", ckptDir, oldJob), 405, "GET"},
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

// TestEndToEndFileStore wires the real checkpoint.Store (file://) into the
// handler: admission and /locate agree on the same chk-N.
func TestEndToEndFileStore(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "team-a", "wordcount")
	for _, rel := range []string{"chk-3/_metadata", "chk-10/_metadata", "chk-11/state", "chk-9/_metadata"} {
		p := filepath.Join(base, oldJob, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, err := NewHandler(Config{
		Trust:          Trust{Groups: []string{DefaultTrustedGroup}},
		PrefixTemplate: "file://" + root + "/{namespace}/",
		Locator:        &checkpoint.Store{AllowFile: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "file://" + base + "/" + oldJob + "/chk-10"

	code, body, raw := locate(t, h, http.MethodGet, url.Values{"namespace": {"team-a"}, "checkpointDir": {"file://" + base}, "jobId": {oldJob}})
	if code != 200 || body.SavepointPath != want || body.CheckpointID != 10 {
		t.Fatalf("locate: %d %s", code, raw)
	}

	resp := roundTrip(t, h, &admissionv1.AdmissionRequest{
		UID:       "u1",
		Resource:  metav1.GroupVersionResource{Group: "flink.apache.org", Version: "v1beta1", Resource: "flinkdeployments"},
		Namespace: "team-a",
		Operation: admissionv1.Create,
		UserInfo:  karmadaSA,
		Object:    runtime.RawExtension{Raw: fd(marker(), nil, conf("file://"+base, "state.savepoints.dir", "file://"+root+"/sp"), job())},
	})
	wantPatch := `[{"op":"add","path":"/spec/job/initialSavepointPath","value":"` + want + `"},` +
		`{"op":"add","path":"/spec/job/upgradeMode","value":"savepoint"},` +
		`{"op":"add","path":"/metadata/annotations","value":{"restore.lab.karmada.io/checkpoint":"` + want +
		`","restore.lab.karmada.io/decision":"restored","restore.lab.karmada.io/from-job-id":"` + oldJob + `"}}]`
	if !resp.Allowed || string(resp.Patch) != wantPatch {
		t.Fatalf("allowed=%v patch=%s result=%+v\nwant %s", resp.Allowed, resp.Patch, resp.Result, wantPatch)
	}
}
