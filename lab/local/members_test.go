package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/pki"
)

// TestMemberConfigAdmission checks what a member's kube-apiserver is given so
// that it calls the member's restore webhook with the lab's client
// certificate: the kwokctl configuration passes an AdmissionConfiguration
// whose MutatingAdmissionWebhook kubeconfig has a user for exactly that
// webhook's host:port.
func TestMemberConfigAdmission(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LAB_DIR", t.TempDir())
	cfg, err := config.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Bins.KwokStages = t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg.Bins.KwokStages, "pod-fast.yaml"), []byte("kind: Stage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := New(cfg)
	path, err := l.memberConfig(2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(string(b), "\n---\n", 2)[0]
	var kc struct {
		Kind              string `json:"kind"`
		ComponentsPatches []struct {
			Name      string `json:"name"`
			ExtraArgs []struct{ Key, Value string }
		} `json:"componentsPatches"`
	}
	if err := yaml.Unmarshal([]byte(first), &kc); err != nil {
		t.Fatalf("kwokctl configuration: %v\n%s", err, first)
	}
	if kc.Kind != "KwokctlConfiguration" || len(kc.ComponentsPatches) != 1 || kc.ComponentsPatches[0].Name != "kube-apiserver" ||
		len(kc.ComponentsPatches[0].ExtraArgs) != 1 || kc.ComponentsPatches[0].ExtraArgs[0].Key != "admission-control-config-file" {
		t.Fatalf("kwokctl configuration without the kube-apiserver admission patch: %+v", kc)
	}
	admission, err := os.ReadFile(kc.ComponentsPatches[0].ExtraArgs[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	var ac struct {
		APIVersion, Kind string
		Plugins          []struct {
			Name          string
			Configuration struct {
				Kind           string
				KubeConfigFile string `json:"kubeConfigFile"`
			}
		}
	}
	if err := yaml.Unmarshal(admission, &ac); err != nil {
		t.Fatal(err)
	}
	if ac.APIVersion != "apiserver.config.k8s.io/v1" || ac.Kind != "AdmissionConfiguration" || len(ac.Plugins) != 1 ||
		ac.Plugins[0].Name != "MutatingAdmissionWebhook" || ac.Plugins[0].Configuration.Kind != "WebhookAdmissionConfiguration" {
		t.Fatalf("admission configuration: %+v", ac)
	}
	kubeconfig, err := clientcmd.LoadFromFile(ac.Plugins[0].Configuration.KubeConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	user, ok := kubeconfig.AuthInfos["127.0.0.1:24602"]
	crt, key := l.pki(pki.RestoreWebhookClient)
	if !ok || user.ClientCertificate != crt || user.ClientKey != key || len(kubeconfig.AuthInfos) != 1 {
		t.Fatalf("want one user 127.0.0.1:24602 (member2's restore webhook) with %s, got %+v", crt, kubeconfig.AuthInfos)
	}
}
