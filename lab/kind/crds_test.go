package kind

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/karmada-failover/lab/lab/config"
)

// moduleDir downloads a Go module (path@version) through the module proxy,
// checks its hash against the pinned one, and returns its folder.
func moduleDir(t *testing.T, module, sum string) string {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", module).Output()
	var info struct{ Dir, Sum, Error string }
	if jerr := json.Unmarshal(out, &info); err != nil || jerr != nil || info.Error != "" {
		if os.Getenv("LAB_KIND_VERIFY") == "1" {
			t.Fatalf("go mod download %s: %v %s", module, err, info.Error)
		}
		t.Skipf("go mod download %s: %v %s (no module proxy?)", module, err, info.Error)
	}
	if sum != "" && info.Sum != sum {
		t.Fatalf("%s: hash %s, pinned %s", module, info.Sum, sum)
	}
	return info.Dir
}

// crdValidators returns a validator per group/kind of the custom resources the
// kind lab applies, from the CRDs of the versions it installs:
//   - FlinkDeployment: the operator's CRD as Karmada v1.18.2 ships it for its
//     own e2e tests (test/e2e/suites/base/manifest; operator release-1.13, which
//     differs from 1.15's in status.conditions only; the operator's API jar
//     is not on Maven Central);
//   - Certificate, Issuer: cert-manager's CRDs of the pinned chart version;
//   - ClusterPolicy: Kyverno's CRD of the pinned chart's app version.
func crdValidators(t *testing.T, cfg *config.Config) map[string]*CRDValidator {
	t.Helper()
	out := map[string]*CRDValidator{}
	add := func(gk, path, version string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", gk, err)
		}
		v, err := NewCRDValidator(b, version)
		if err != nil {
			t.Fatalf("%s: %v", gk, err)
		}
		out[gk] = v
	}
	karmada, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/karmada-io/karmada").Output()
	if err != nil {
		t.Fatal(err)
	}
	add("FlinkDeployment.flink.apache.org", filepath.Join(string(trimNL(karmada)), "test", "e2e", "suites", "base", "manifest", "flinkdeployments.flink.apache.org-v1.yaml"), "v1beta1")
	cm := moduleDir(t, CertManager.CRDModule, CertManager.CRDModuleSum)
	add("Certificate.cert-manager.io", filepath.Join(cm, "deploy", "crds", "crd-certificates.yaml"), "v1")
	add("Issuer.cert-manager.io", filepath.Join(cm, "deploy", "crds", "crd-issuers.yaml"), "v1")
	ky := moduleDir(t, Kyverno.CRDModule, Kyverno.CRDModuleSum)
	add("ClusterPolicy.kyverno.io", filepath.Join(ky, "config", "crds", "kyverno", "kyverno.io_clusterpolicies.yaml"), "v1")
	_ = cfg
	return out
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
