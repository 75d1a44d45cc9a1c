package framework

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// objectStore is a minimal path-style S3 endpoint of one bucket: PUT, HEAD, GET, DELETE of
// objects and ListObjectsV2, for requests signed with the access key it was made with (a
// store that does not know the key answers 403 to every request, as SeaweedFS does).
type objectStore struct {
	bucket, accessKey string
	mu                sync.Mutex
	objects           map[string][]byte
}

func (s *objectStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Authorization"), "Credential="+s.accessKey+"/") {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key, ok := strings.CutPrefix(r.URL.Path, "/"+s.bucket+"/")
	switch {
	case r.Method == http.MethodGet && (r.URL.Path == "/"+s.bucket || key == ""):
		type content struct{ Key string }
		out := struct {
			XMLName  xml.Name  `xml:"ListBucketResult"`
			Contents []content `xml:"Contents"`
		}{}
		for k := range s.objects {
			if strings.HasPrefix(k, r.URL.Query().Get("prefix")) {
				out.Contents = append(out.Contents, content{k})
			}
		}
		_ = xml.NewEncoder(w).Encode(out)
	case !ok:
		w.WriteHeader(http.StatusNotFound)
	case r.Method == http.MethodPut:
		b, _ := io.ReadAll(r.Body)
		s.objects[key] = b
	case r.Method == http.MethodDelete:
		delete(s.objects, key)
		w.WriteHeader(http.StatusNoContent)
	default: // GET, HEAD
		b, found := s.objects[key]
		if !found {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if r.Method == http.MethodGet {
			_, _ = w.Write(b)
		}
	}
}

// TestProbeTellsAStoreThatRefusesItsClients: the after-spec health check's store probe passes
// on a store that takes the keys and leaves nothing behind, and fails, naming the request, on a
// store that refuses them (the lab's store restarted with new identities) or is down.
func TestProbeTellsAStoreThatRefusesItsClients(t *testing.T) {
	store := &objectStore{bucket: "flink-checkpoints", accessKey: "lab", objects: map[string][]byte{}}
	srv := httptest.NewServer(store)
	defer srv.Close()
	ctx := context.Background()

	held := &CheckpointStore{Endpoint: srv.URL, Region: "us-east-1", AccessKey: "lab", SecretKey: "s"}
	if err := held.Probe(ctx, "flink-checkpoints", "e2e-health"); err != nil {
		t.Fatalf("a store that takes the keys: %v", err)
	}
	if len(store.objects) != 0 {
		t.Errorf("the probe left %d objects behind", len(store.objects))
	}

	refused := &CheckpointStore{Endpoint: srv.URL, Region: "us-east-1", AccessKey: "old-lab", SecretKey: "s"}
	err := refused.Probe(ctx, "flink-checkpoints", "e2e-health")
	if err == nil || !strings.Contains(err.Error(), "PUT s3://flink-checkpoints/e2e-health/") {
		t.Fatalf("a store that refuses the keys: got %v, want the PUT named", err)
	}

	srv.Close()
	if err := held.Probe(ctx, "flink-checkpoints", "e2e-health"); err == nil {
		t.Fatal("a store that is down passed the probe")
	}
}
