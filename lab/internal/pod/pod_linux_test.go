package pod

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The test binary is also the pod's init process and the command it runs.
const workloadEnv = "LAB_POD_TEST_WORKLOAD"

func TestMain(m *testing.M) {
	if IsInit() {
		Init()
		return
	}
	if addr := os.Getenv(workloadEnv); addr != "" {
		workload(addr)
		return
	}
	os.Exit(m.Run())
}

// workload listens on every address (as Kyverno does) and answers what a
// pod's process sees: its ServiceAccount files and the host service it reaches.
func workload(addr string) {
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		out := map[string]string{}
		for _, f := range []string{"token", "namespace", "ca.crt"} {
			b, err := os.ReadFile(filepath.Join(ServiceAccountPath, f))
			if err != nil {
				out[f] = "error: " + err.Error()
				continue
			}
			out[f] = string(b)
		}
		if resp, err := http.Get("http://127.0.0.1:8080/"); err != nil {
			out["reach"] = "error: " + err.Error()
		} else {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			out["reach"] = string(b)
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	if err := http.ListenAndServe(addr, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// fakeAPIServer answers TokenRequests for kyverno/kyverno-admission-controller.
func fakeAPIServer(t *testing.T) (kubeconfig string, ca []byte) {
	t.Helper()
	calls := 0
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/namespaces/kyverno/serviceaccounts/kyverno-admission-controller/token" {
			http.NotFound(w, r)
			return
		}
		var tr authenticationv1.TokenRequest
		if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		calls++
		tr.APIVersion, tr.Kind = "authentication.k8s.io/v1", "TokenRequest"
		tr.Status.Token = fmt.Sprintf("token-%d", calls)
		tr.Status.ExpirationTimestamp = metav1.NewTime(time.Now().Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second))
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&tr)
	}))
	t.Cleanup(ts.Close)
	ca = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["member1"] = &clientcmdapi.Cluster{Server: ts.URL, CertificateAuthorityData: ca}
	cfg.AuthInfos["member1"] = &clientcmdapi.AuthInfo{Token: "admin"}
	cfg.Contexts["member1"] = &clientcmdapi.Context{Cluster: "member1", AuthInfo: "member1"}
	kubeconfig = filepath.Join(t.TempDir(), "members.config")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, ca
}

// A pod's process gets its ServiceAccount volume at the in-cluster path and
// reaches the host only through the named ports; what it binds, on every
// address, is reachable from the host only where exposed; it ends with the pod.
func TestPod(t *testing.T) {
	kubeconfig, ca := fakeAPIServer(t)
	reached := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "host service") }))
	defer reached.Close()
	podPort := freePort(t) // free on the host too: the test checks it stays so
	exposed := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(workloadEnv, fmt.Sprintf(":%d", podPort))
	// The folder of a pod killed before it cleaned up: emptied, then removed.
	podDir := filepath.Join(t.TempDir(), "pod")
	if err := os.MkdirAll(filepath.Join(podDir, "serviceaccount"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(podDir, "serviceaccount", "token"), []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := Spec{
		Dir:     podDir,
		Expose:  []Expose{{Host: exposed, Pod: podPort}},
		Reach:   []Reach{{Pod: 8080, Host: strings.TrimPrefix(reached.URL, "http://")}},
		Token:   &Token{Kubeconfig: kubeconfig, Context: "member1", Namespace: "kyverno", Name: "kyverno-admission-controller", TTL: time.Hour},
		Command: []string{self},
		Grace:   5 * time.Second,
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, s) }()

	var got map[string]string
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-done:
			if err != nil && strings.Contains(err.Error(), "starting the pod") {
				t.Skipf("no Linux namespaces here: %v", err)
			}
			t.Fatalf("the pod ended early: %v", err)
		default:
		}
		resp, err := http.Get("http://" + exposed + "/")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pod's port never answered on %s: %v", exposed, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	want := map[string]string{"token": "token-1", "namespace": "kyverno", "ca.crt": string(ca), "reach": "host service"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("in the pod, %s = %q, want %q", k, got[k], v)
		}
	}
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", podPort), time.Second); err == nil {
		c.Close()
		t.Errorf("the pod's listener on every address is reachable on the host's port %d", podPort)
	}
	if _, err := os.Stat(ServiceAccountPath + "/token"); err == nil {
		t.Errorf("the pod's ServiceAccount volume is visible on the host")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the pod did not stop within its grace period")
	}
	if c, err := net.DialTimeout("tcp", exposed, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still answers after the pod stopped", exposed)
	}
	if _, err := os.Stat(podDir); !os.IsNotExist(err) {
		t.Errorf("the pod's folder is left: %v", err)
	}
}
