package kind

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	cmdinitk8s "github.com/karmada-io/karmada/pkg/karmadactl/cmdinit/kubernetes"
)

// fakeHostAPIServer answers the few calls karmadactl init's Complete() makes
// of the host cluster: no Service holds a NodePort yet, and there is one
// Ready node (the kind control plane), which it labels for etcd.
func fakeHostAPIServer(t *testing.T) string {
	node := corev1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: HostCluster + "-control-plane", Labels: map[string]string{"karmada.io/etcd": ""}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses:  []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "172.18.0.2"}},
		},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var body any
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/services":
			body = corev1.ServiceList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceList"}}
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/nodes":
			body = corev1.NodeList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "NodeList"}, Items: []corev1.Node{node}}
		case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/api/v1/nodes/"):
			body = node
		default:
			t.Errorf("unexpected call %s %s", r.Method, r.URL)
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	kubeconfig := filepath.Join(t.TempDir(), "host.kubeconfig")
	c := clientcmdapi.NewConfig()
	c.Clusters["kind"] = &clientcmdapi.Cluster{Server: srv.URL}
	c.AuthInfos["kind"] = &clientcmdapi.AuthInfo{Token: "test"}
	c.Contexts["kind-"+HostCluster] = &clientcmdapi.Context{Cluster: "kind", AuthInfo: "kind"}
	c.CurrentContext = "kind-" + HostCluster
	if err := clientcmd.WriteToFile(*c, kubeconfig); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

// TestKarmadactlInitKeepsTheCRDArchive runs karmadactl init's own Validate()
// and Complete() (v1.18.2) on the lab's init configuration and file layout,
// against a fake host API server. Complete() empties KarmadaDataPath before
// init reads KarmadaCRDs, so the archive must live outside that folder (and
// outside the PKI folder), or init fails with "inValid crd tar ... no such
// file".
func TestKarmadactlInitKeepsTheCRDArchive(t *testing.T) {
	t.Setenv("LAB_DIR", t.TempDir())
	cfg := testConfig(t)
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	crds := l.karmadaCRDArchive()
	if err := os.MkdirAll(filepath.Dir(crds), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crds, []byte("archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(KarmadaInitConfig(cfg, l.ImageTag, fakeHostAPIServer(t), crds, l.karmadaDataDir()))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "karmada-init.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := &cmdinitk8s.CommandInitOption{KarmadaInitFilePath: path}
	if err := opts.Validate("karmadactl"); err != nil {
		t.Fatal(err)
	}
	if err := opts.Complete(); err != nil {
		t.Fatalf("karmadactl init Complete(): %v", err)
	}
	if _, err := os.Stat(crds); err != nil {
		t.Fatalf("karmadactl init removed the CRD archive before reading it (KarmadaDataPath %s, KarmadaCRDs %s): %v",
			opts.KarmadaDataPath, opts.CRDs, err)
	}
	if _, err := os.Stat(opts.KarmadaDataPath); err != nil {
		t.Fatalf("Complete() did not create KarmadaDataPath: %v", err)
	}
}
