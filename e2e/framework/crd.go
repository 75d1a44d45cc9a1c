package framework

import (
	"context"
	"fmt"

	dto "github.com/prometheus/client_model/go"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// ResourceBindingCRD is the name of Karmada's ResourceBinding CRD.
const ResourceBindingCRD = "resourcebindings.work.karmada.io"

// RemoveFailoverHistoryFromCRD replaces the ResourceBinding CRD on the Karmada API server with one
// whose schema has no status.failoverHistory, as a CRD older than karmada-controller-manager has
// (the binaries upgraded before the CRDs): the API server then prunes the field from every write.
// It returns the function that puts the CRD's versions back as they were.
func RemoveFailoverHistoryFromCRD(ctx context.Context, k *ClusterProxy) (func(context.Context) error, error) {
	cs, err := apiextensionsclientset.NewForConfig(k.RESTConfig())
	if err != nil {
		return nil, err
	}
	crds := cs.ApiextensionsV1().CustomResourceDefinitions()
	original, err := crds.Get(ctx, ResourceBindingCRD, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	removed := 0
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := crds.Get(ctx, ResourceBindingCRD, metav1.GetOptions{})
		if err != nil {
			return err
		}
		removed = 0
		for i := range crd.Spec.Versions {
			if removeStatusField(&crd.Spec.Versions[i], "failoverHistory") {
				removed++
			}
		}
		if removed == 0 {
			return nil
		}
		_, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, err
	}
	if removed == 0 {
		return nil, fmt.Errorf("the CRD %s has no status.failoverHistory in any version: not the patched Karmada's CRD", ResourceBindingCRD)
	}
	restore := func(ctx context.Context) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			crd, err := crds.Get(ctx, ResourceBindingCRD, metav1.GetOptions{})
			if err != nil {
				return err
			}
			crd.Spec.Versions = original.Spec.Versions
			_, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
			return err
		})
	}
	return restore, nil
}

// removeStatusField removes a field from the status schema of a CRD version, and tells whether it
// was there.
func removeStatusField(v *apiextensionsv1.CustomResourceDefinitionVersion, field string) bool {
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return false
	}
	// Properties maps to values whose own Properties is a map: deleting from it changes the schema.
	status, ok := v.Schema.OpenAPIV3Schema.Properties["status"]
	if _, has := status.Properties[field]; !ok || !has {
		return false
	}
	delete(status.Properties, field)
	return true
}

// BindingStatusWrites returns how many writes of the status of ResourceBindings the Karmada API
// server has served since it started (its apiserver_request_total, verbs PUT, PATCH and APPLY of
// the status subresource), whatever their outcome: a controller that writes the status in a loop
// shows here, also when its writes change nothing.
func BindingStatusWrites(ctx context.Context, k *ClusterProxy) (float64, error) {
	families, err := ScrapeMetrics(ctx, k)
	if err != nil {
		return 0, err
	}
	return bindingStatusWrites(families)
}

func bindingStatusWrites(families map[string]*dto.MetricFamily) (float64, error) {
	family, ok := families["apiserver_request_total"]
	if !ok {
		return 0, fmt.Errorf("/metrics has no apiserver_request_total")
	}
	total := 0.0
	for _, m := range family.GetMetric() {
		l := MetricLabels(m)
		if l["group"] != "work.karmada.io" || l["resource"] != "resourcebindings" || l["subresource"] != "status" {
			continue
		}
		switch l["verb"] {
		case "PUT", "PATCH", "APPLY":
			total += m.GetCounter().GetValue()
		}
	}
	return total, nil
}
