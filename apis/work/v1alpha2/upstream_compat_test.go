/*
Copyright The Karmada Failover Lab Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha2

import (
	"reflect"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	upstream "github.com/karmada-io/karmada/pkg/apis/work/v1alpha2"
)

// jsonFields maps the JSON names of a struct's fields to their Go types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		fields[name] = f.Type
	}
	return fields
}

// kindOf reduces a Go type to what its JSON looks like, so that our own named types
// (for example our TargetCluster) compare equal to upstream's.
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return kindOf(t.Elem())
	case reflect.Slice:
		return "[]" + kindOf(t.Elem())
	case reflect.Map:
		return "map[" + kindOf(t.Key()) + "]" + kindOf(t.Elem())
	case reflect.Struct:
		if t.PkgPath() != "" && !strings.Contains(t.PkgPath(), "/apis/work/") {
			return t.String() // metav1.Time, runtime.RawExtension, ...
		}
		return "struct"
	default:
		return t.Kind().String()
	}
}

// TestFieldsMatchPinnedUpstreamTypes checks, against the Go types of the pinned upstream
// Karmada module (unpatched), that every field our read-only types declare exists upstream
// with the same JSON name and shape. failoverHistory is the one field the series adds; its
// schema is checked against the patched CRDs by drift_test.go.
func TestFieldsMatchPinnedUpstreamTypes(t *testing.T) {
	g := NewWithT(t)
	pairs := []struct {
		ours, theirs reflect.Type
		added        []string
	}{
		{reflect.TypeOf(ResourceBindingSpec{}), reflect.TypeOf(upstream.ResourceBindingSpec{}), nil},
		{reflect.TypeOf(ResourceBindingStatus{}), reflect.TypeOf(upstream.ResourceBindingStatus{}), []string{"failoverHistory"}},
		{reflect.TypeOf(ObjectReference{}), reflect.TypeOf(upstream.ObjectReference{}), nil},
		{reflect.TypeOf(TargetCluster{}), reflect.TypeOf(upstream.TargetCluster{}), nil},
		{reflect.TypeOf(GracefulEvictionTask{}), reflect.TypeOf(upstream.GracefulEvictionTask{}), nil},
		{reflect.TypeOf(AggregatedStatusItem{}), reflect.TypeOf(upstream.AggregatedStatusItem{}), nil},
	}
	for _, p := range pairs {
		theirs := jsonFields(p.theirs)
		for name, typ := range jsonFields(p.ours) {
			if contains(p.added, name) {
				g.Expect(theirs).NotTo(HaveKey(name), "%s.%s is added by the series, not upstream", p.ours.Name(), name)
				continue
			}
			g.Expect(theirs).To(HaveKey(name), "%s.%s does not exist in upstream %s", p.ours.Name(), name, p.theirs)
			g.Expect(kindOf(typ)).To(Equal(kindOf(theirs[name])), "%s.%s has another shape upstream", p.ours.Name(), name)
		}
	}
	g.Expect(string(ResourceHealthy)).To(Equal(string(upstream.ResourceHealthy)))
	g.Expect(SchemeGroupVersion.String()).To(Equal(upstream.SchemeGroupVersion.String()))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
