package framework

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/karmada-failover/lab/lab/flinkrunner"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// Without the lab runner's address in the status (kind: the operator's pods),
// a scenario reads the job's REST API through the member API server's proxy to
// the JobManager's REST Service.
func TestFlinkRESTThroughTheAPIServersServiceProxy(t *testing.T) {
	const jobID = "0123456789abcdef0123456789abcdef"
	var got string
	apiserver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Path
		if r.URL.Path != "/api/v1/namespaces/team-a/services/job-rest:rest/proxy/jobs/"+jobID+"/checkpoints" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"counts":{"completed":4},"latest":{"completed":{"id":7,"external_path":"s3://ck/chk-7"},"restored":null}}`))
	}))
	defer apiserver.Close()
	fd := &unstructured.Unstructured{Object: map[string]interface{}{
		"metadata": map[string]interface{}{"namespace": "team-a", "name": "job"},
		"status":   map[string]interface{}{"jobStatus": map[string]interface{}{"jobId": jobID, "state": "RUNNING"}},
	}}
	l := &Lab{Members: map[string]*ClusterProxy{"member1": {Name: "member1", config: &rest.Config{Host: apiserver.URL}}}}
	st := l.ReadFlinkStatus("member1", fd)
	cp, err := st.REST.Checkpoints(context.Background())
	if err != nil {
		t.Fatalf("through the proxy (%s): %v", got, err)
	}
	if cp.Completed != 4 || cp.LatestCompletedN != 7 || cp.LatestCompleted != "s3://ck/chk-7" {
		t.Errorf("checkpoints %+v", cp)
	}

	// The hermetic lab's runner reports a direct address: that one is used.
	_ = unstructured.SetNestedField(fd.Object, "http://127.0.0.1:24700", "status", "clusterInfo", flinkrunner.ClusterInfoRestURL)
	if st := l.ReadFlinkStatus("member1", fd); st.REST.URL != "http://127.0.0.1:24700" || st.REST.Client != nil {
		t.Errorf("runner address: %+v", st.REST)
	}
}
