package framework

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestBindingStatusWrites(t *testing.T) {
	raw := []byte(`# HELP apiserver_request_total Counter of apiserver requests.
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",dry_run="",group="work.karmada.io",resource="resourcebindings",scope="resource",subresource="status",verb="PUT",version="v1alpha2"} 7
apiserver_request_total{code="409",component="apiserver",dry_run="",group="work.karmada.io",resource="resourcebindings",scope="resource",subresource="status",verb="PUT",version="v1alpha2"} 2
apiserver_request_total{code="200",component="apiserver",dry_run="",group="work.karmada.io",resource="resourcebindings",scope="resource",subresource="status",verb="PATCH",version="v1alpha2"} 3
apiserver_request_total{code="200",component="apiserver",dry_run="",group="work.karmada.io",resource="resourcebindings",scope="resource",subresource="",verb="PUT",version="v1alpha2"} 40
apiserver_request_total{code="200",component="apiserver",dry_run="",group="work.karmada.io",resource="resourcebindings",scope="resource",subresource="status",verb="GET",version="v1alpha2"} 100
apiserver_request_total{code="200",component="apiserver",dry_run="",group="work.karmada.io",resource="clusterresourcebindings",scope="resource",subresource="status",verb="PUT",version="v1alpha2"} 5
`)
	families, err := ParseMetrics(raw)
	if err != nil {
		t.Fatal(err)
	}
	got, err := bindingStatusWrites(families)
	if err != nil {
		t.Fatal(err)
	}
	// Status PUTs whatever their code, and PATCHes; not spec writes, reads or other resources.
	if got != 12 {
		t.Errorf("bindingStatusWrites = %v, want 12", got)
	}
	if families, err = ParseMetrics([]byte("# TYPE up gauge\nup 1\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := bindingStatusWrites(families); err == nil {
		t.Error("metrics without apiserver_request_total: no error")
	}
}

func TestRemoveStatusField(t *testing.T) {
	v := apiextensionsv1.CustomResourceDefinitionVersion{Schema: &apiextensionsv1.CustomResourceValidation{
		OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"status": {Properties: map[string]apiextensionsv1.JSONSchemaProps{"failoverHistory": {}, "conditions": {}}},
		}},
	}}
	if !removeStatusField(&v, "failoverHistory") {
		t.Fatal("failoverHistory not removed")
	}
	status := v.Schema.OpenAPIV3Schema.Properties["status"]
	if _, ok := status.Properties["failoverHistory"]; ok {
		t.Error("failoverHistory still in the schema")
	}
	if _, ok := status.Properties["conditions"]; !ok {
		t.Error("conditions removed")
	}
	if removeStatusField(&v, "failoverHistory") {
		t.Error("removed twice")
	}
	if removeStatusField(&apiextensionsv1.CustomResourceDefinitionVersion{}, "failoverHistory") {
		t.Error("removed from a version without a schema")
	}
}
