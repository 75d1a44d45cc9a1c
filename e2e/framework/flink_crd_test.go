package framework

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/karmada-failover/lab/apis/flink"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/kind"
)

// The scenarios' FlinkDeployment is one the operator's CRD accepts, and the
// CRD the hermetic lab installs refuses a misspelt field of it: the lab's API
// servers do the same under kubectl's strict field validation (the e2e spec
// "FlinkDeployment runner restarted under a running job" shows them).
func TestFlinkDeploymentFitsTheOperatorsCRD(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/karmada-io/karmada").Output()
	if err != nil {
		t.Fatal(err)
	}
	crd, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), filepath.FromSlash(config.FlinkCRDInKarmada)))
	if err != nil {
		t.Fatal(err)
	}
	v, err := kind.NewCRDValidator(crd, flink.GVR.Version)
	if err != nil {
		t.Fatal(err)
	}
	fd := NewFlinkDeployment("ns", "job", "s3://checkpoints/ns/job")
	doc := func(u *unstructured.Unstructured) []byte {
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if err := v.Validate(doc(fd)); err != nil {
		t.Fatalf("the scenarios' FlinkDeployment: %v", err)
	}
	misspelt := fd.DeepCopy()
	unstructured.RemoveNestedField(misspelt.Object, "spec", "job", "upgradeMode")
	_ = unstructured.SetNestedField(misspelt.Object, "last-state", "spec", "job", "upgradeMod")
	if err := v.Validate(doc(misspelt)); err == nil || !strings.Contains(err.Error(), "spec.job.upgradeMod") {
		t.Errorf("misspelt spec.job.upgradeMod: error %v, want one naming the field", err)
	}
	badEnum := fd.DeepCopy()
	_ = unstructured.SetNestedField(badEnum.Object, "last_state", "spec", "job", "upgradeMode")
	if err := v.Validate(doc(badEnum)); err == nil || !strings.Contains(err.Error(), "spec.job.upgradeMode") {
		t.Errorf("upgradeMode last_state: error %v, want one naming the field", err)
	}
}
