package kind

import (
	"github.com/karmada-failover/lab/lab/internal/manifest"

	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
	"github.com/karmada-io/karmada/pkg/util/validation"

	"github.com/karmada-failover/lab/lab/config"
)

// renderedManifests is every manifest the kind lab applies, rendered as `lab up`
// renders it (sample credentials and addresses).
func renderedManifests(t *testing.T, cfg *config.Config) map[string][]byte {
	t.Helper()
	creds := &S3Credentials{AccessKey: "failover-lab", SecretKey: "0123456789abcdef"}
	out := map[string][]byte{}
	render := func(name string, data map[string]any) {
		b, err := RenderManifest(name, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b
	}
	render("minio.yaml", map[string]any{"Image": MinIOImage, "NodePort": MinIONodePort, "HostPort": S3Port, "AccessKey": creds.AccessKey, "SecretKey": creds.SecretKey})
	render("seaweedfs.yaml", SeaweedFSData("failover-lab/seaweedfs:lab-patched", creds))
	render("checkpoint-store-member.yaml", map[string]any{"HostIP": "172.18.0.2", "NodePort": MinIONodePort})
	render("restore-webhook.yaml", map[string]any{"Image": "failover-lab/flink-restore-webhook:lab-patched", "Port": cfg.Ports.RestoreWebhook, "Member": "member1", "AccessKey": creds.AccessKey, "SecretKey": creds.SecretKey})
	render("restore-webhook-certificate.yaml", map[string]any{"ServiceDNS": RestoreWebhookServiceDNS})
	render("flink-runner.yaml", FlinkRunnerData("failover-lab/flink-runner:lab-patched", "failover-lab/flink-job:lab-patched", cfg.FlinkOutputDir(), creds, -1))
	render("flink-demo.yaml", FlinkDemoData("failover-lab/flink-job:lab-patched", []string{"member1", "member2", "member3"}, creds))
	b, err := Manifests.ReadFile("manifests/flink-operator-values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out["flink-operator-values.yaml"] = b
	// The restore configurations from restore/deploy, with the CA put in as the lab does.
	ca := "-----BEGIN CERTIFICATE-----\nMIIBsample\n-----END CERTIFICATE-----"
	for src, repl := range map[string][2]string{
		"mutatingwebhookconfiguration-kind.yaml": {"{{caBundle}}", base64.StdEncoding.EncodeToString([]byte(ca))},
		"kyverno-clusterpolicy.yaml":             {"{{caBundle-PEM}}", manifest.IndentPEM(ca, "                ")},
	} {
		b, err := os.ReadFile(filepath.Join(cfg.Root, "restore", "deploy", src))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), repl[0]) {
			t.Fatalf("restore/deploy/%s has no %s placeholder", src, repl[0])
		}
		out[src] = []byte(strings.ReplaceAll(string(b), repl[0], repl[1]))
	}
	return out
}

// TestManifestsAreValid decodes every document the kind lab applies: built-in
// kinds strictly with client-go's scheme, Karmada policies strictly into
// Karmada's types and through Karmada's own validation, custom resources of
// other projects against their CRD schemas (see crdValidators).
func TestManifestsAreValid(t *testing.T) {
	cfg := testConfig(t)
	validators := crdValidators(t, cfg)
	kinds := map[string]int{}
	for name, b := range renderedManifests(t, cfg) {
		if strings.HasSuffix(name, "-values.yaml") {
			var v map[string]any
			if err := yaml.UnmarshalStrict(b, &v); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		docs, err := SplitYAML(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, doc := range docs {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(doc, &u.Object); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			id := name + ": " + u.GetKind() + " " + u.GetName()
			kinds[u.GetKind()]++
			if u.GetName() == "" {
				t.Errorf("%s: no metadata.name", id)
			}
			if _, builtin, err := StrictBuiltin(doc); builtin {
				if err != nil {
					t.Errorf("%s: %v", id, err)
				}
				continue
			}
			switch u.GetKind() {
			case "PropagationPolicy":
				var pp policyv1alpha1.PropagationPolicy
				if err := yaml.UnmarshalStrict(doc, &pp); err != nil {
					t.Errorf("%s: %v", id, err)
					continue
				}
				if errs := validation.ValidatePropagationSpec(pp.Spec, pp.Namespace); len(errs) > 0 {
					t.Errorf("%s: Karmada's validation: %v", id, errs.ToAggregate())
				}
			default:
				v, ok := validators[u.GroupVersionKind().GroupKind().String()]
				if !ok {
					t.Errorf("%s: no schema to validate %s against", id, u.GroupVersionKind())
					continue
				}
				if err := v.Validate(doc); err != nil {
					t.Errorf("%s: %v", id, err)
				}
			}
		}
	}
	for _, k := range []string{"Deployment", "Service", "EndpointSlice", "Certificate", "Issuer", "FlinkDeployment", "ClusterRole", "ClusterRoleBinding",
		"PropagationPolicy", "MutatingWebhookConfiguration", "ClusterPolicy"} {
		if kinds[k] == 0 {
			t.Errorf("no %s was checked", k)
		}
	}
}

// TestCRDValidationCatchesMistakes makes sure the CRD check can fail.
func TestCRDValidationCatchesMistakes(t *testing.T) {
	cfg := testConfig(t)
	validators := crdValidators(t, cfg)
	for gk, doc := range map[string]string{
		"FlinkDeployment.flink.apache.org": "apiVersion: flink.apache.org/v1beta1\nkind: FlinkDeployment\nmetadata: {name: x}\nspec:\n  job:\n    jarURl: local:///typo.jar\n",
		"Certificate.cert-manager.io":      "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: x}\nspec:\n  secretName: s\n  dnsName: [a]\n  issuerRef: {name: i}\n",
		"ClusterPolicy.kyverno.io":         "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: x}\nspec:\n  rulez: []\n",
	} {
		v, ok := validators[gk]
		if !ok {
			t.Errorf("no validator for %s", gk)
			continue
		}
		if err := v.Validate([]byte(doc)); err == nil {
			t.Errorf("%s: a misspelt field passed", gk)
		}
	}
}

// TestKyvernoValuesAreTheChartsOwn checks every value manifests/kyverno-values.yaml sets
// against the values.yaml of Kyverno's chart in the pinned module, the chart the kind lab
// installs where it builds its images: Helm ignores a misspelt key, and the controller it
// meant to turn off would run, from an image nobody built.
func TestKyvernoValuesAreTheChartsOwn(t *testing.T) {
	ky := moduleDir(t, Kyverno.CRDModule, Kyverno.CRDModuleSum)
	chart, err := os.ReadFile(filepath.Join(ky, "charts", "kyverno", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(chart), "\nversion: "+Kyverno.Version+"\n") {
		t.Fatalf("the module %s does not hold Kyverno's chart %s", Kyverno.CRDModule, Kyverno.Version)
	}
	var defaults, ours map[string]any
	b, err := os.ReadFile(filepath.Join(ky, "charts", "kyverno", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &defaults); err != nil {
		t.Fatal(err)
	}
	b, err = Manifests.ReadFile("manifests/kyverno-values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, &ours); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, ours, defaults map[string]any)
	walk = func(path string, ours, defaults map[string]any) {
		for k, v := range ours {
			d, ok := defaults[k]
			if !ok {
				t.Errorf("kyverno-values.yaml sets %s%s, which Kyverno's chart %s does not have", path, k, Kyverno.Version)
				continue
			}
			if m, ok := v.(map[string]any); ok {
				dm, _ := d.(map[string]any)
				walk(path+k+".", m, dm)
			}
		}
	}
	walk("", ours, defaults)
	for _, off := range []string{"backgroundController", "cleanupController", "reportsController", "webhooksCleanup"} {
		if m, _ := ours[off].(map[string]any); m == nil || m["enabled"] != false {
			t.Errorf("kyverno-values.yaml leaves %s on, whose image the lab does not build", off)
		}
	}
}
