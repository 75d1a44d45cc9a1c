package flinkrunner

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHealthHandlers: /healthz answers while the process runs, /readyz only once
// the cache of FlinkDeployments has synced, /debug/jobs lists the processes.
func TestHealthHandlers(t *testing.T) {
	r := &Runner{runs: map[string]*run{}}
	mux := http.NewServeMux()
	for path, h := range r.handlers() {
		mux.Handle(path, h)
	}
	get := func(path string) (int, string) {
		t.Helper()
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, strings.TrimSpace(rec.Body.String())
	}
	if code, body := get("/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz: %d %s", code, body)
	}
	if code, _ := get("/readyz"); code != http.StatusInternalServerError {
		t.Fatalf("/readyz before the cache synced: %d, want 500", code)
	}
	if code, body := get("/readyz/cache-synced"); code != http.StatusInternalServerError || !strings.Contains(body, "not synced") {
		t.Fatalf("/readyz/cache-synced before the cache synced: %d %q", code, body)
	}
	r.synced.Store(true)
	if code, body := get("/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz after the cache synced: %d %s", code, body)
	}
	if code, body := get("/debug/jobs"); code != http.StatusOK || body != "[]" {
		t.Fatalf("/debug/jobs: %d %q", code, body)
	}
}
