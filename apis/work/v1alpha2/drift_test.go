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

package v1alpha2_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// The drift tests compare the CRDs that controller-gen makes from this package
// (apis/crds, see hack/update-codegen.sh) with the CRDs of the patched Karmada
// tree (charts/karmada/_crds/bases/work, made by hack/generate.sh).

const (
	// envTree overrides where the patched Karmada tree is.
	envTree = "KARMADA_TREE"
	// envRequireTree turns a missing tree into a failure instead of a skip.
	envRequireTree = "FAILOVER_LAB_REQUIRE_TREE"
	// defaultTree is the patched tree relative to this package's directory,
	// that is <repo>/_output/src/karmada.
	defaultTree = "../../../_output/src/karmada"
	// upstreamCRDDir is where the patched tree keeps the work.karmada.io CRDs.
	upstreamCRDDir = "charts/karmada/_crds/bases/work"
	// ourCRDDir holds the CRDs generated from this package.
	ourCRDDir = "../../crds"

	version = "v1alpha2"
)

var crdFiles = []string{
	"work.karmada.io_resourcebindings.yaml",
	"work.karmada.io_clusterresourcebindings.yaml",
}

// obj is a decoded YAML/JSON object.
type obj = map[string]interface{}

func treeDir() string {
	if d := os.Getenv(envTree); d != "" {
		return d
	}
	return defaultTree
}

// missingTree skips the test, or fails it when envRequireTree is "1".
func missingTree(t *testing.T, format string, args ...interface{}) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(envRequireTree) == "1" {
		t.Fatalf("%s; run `make generate` to materialise and regenerate the patched Karmada tree (or set %s)", msg, envTree)
	}
	t.Skipf("%s; skipping (run `make generate` to get it, set %s=1 to fail instead)", msg, envRequireTree)
}

func readCRD(t *testing.T, path string) obj {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading CRD: %v", err)
	}
	var crd obj
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatalf("decoding CRD %s: %v", path, err)
	}
	return crd
}

// upstreamCRD loads a CRD of the patched tree, skipping (or failing, see
// missingTree) when the tree or the file is not there.
func upstreamCRD(t *testing.T, file string) (obj, string) {
	t.Helper()
	tree := treeDir()
	if fi, err := os.Stat(tree); err != nil || !fi.IsDir() {
		missingTree(t, "patched Karmada tree %s not found", tree)
	}
	path := filepath.Join(tree, upstreamCRDDir, file)
	if _, err := os.Stat(path); err != nil {
		missingTree(t, "upstream CRD %s not found", path)
	}
	return readCRD(t, path), path
}

func ourCRD(t *testing.T, file string) (obj, string) {
	t.Helper()
	path := filepath.Join(ourCRDDir, file)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("generated CRD %s not found: run hack/update-codegen.sh", path)
	}
	return readCRD(t, path), path
}

// lookup walks keys through nested objects; a key "versions[name=v1alpha2]"
// selects the element of the list "versions" whose "name" is "v1alpha2".
func lookup(o obj, keys ...string) (interface{}, error) {
	var cur interface{} = o
	for i, k := range keys {
		m, ok := cur.(obj)
		if !ok {
			return nil, fmt.Errorf("%s is not an object", strings.Join(keys[:i], "."))
		}
		if name, sel, ok := strings.Cut(k, "["); ok {
			sel = strings.TrimSuffix(sel, "]")
			field, want, _ := strings.Cut(sel, "=")
			list, _ := m[name].([]interface{})
			cur = nil
			for _, e := range list {
				if em, ok := e.(obj); ok && em[field] == want {
					cur = em
					break
				}
			}
		} else {
			cur = m[k]
		}
		if cur == nil {
			return nil, fmt.Errorf("%s not found", strings.Join(keys[:i+1], "."))
		}
	}
	return cur, nil
}

func schemaOf(t *testing.T, crd obj, path string) obj {
	t.Helper()
	s, err := lookup(crd, "spec", "versions[name="+version+"]", "schema", "openAPIV3Schema")
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s.(obj)
}

// TestFailoverHistorySchemaMatchesUpstream checks that the schema of
// status.failoverHistory generated from this package is exactly upstream's.
func TestFailoverHistorySchemaMatchesUpstream(t *testing.T) {
	for _, file := range crdFiles {
		t.Run(file, func(t *testing.T) {
			upstream, upPath := upstreamCRD(t, file)
			ours, ourPath := ourCRD(t, file)

			keys := []string{"properties", "status", "properties", "failoverHistory"}
			want, err := lookup(schemaOf(t, upstream, upPath), keys...)
			if err != nil {
				t.Fatalf("upstream %s: openAPIV3Schema.%v; is the tree patched and regenerated (`make generate`)?", upPath, err)
			}
			got, err := lookup(schemaOf(t, ours, ourPath), keys...)
			if err != nil {
				t.Fatalf("%s: openAPIV3Schema.%v; run hack/update-codegen.sh", ourPath, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("schema of %s.openAPIV3Schema.%s drifted from upstream (-upstream %s +ours %s):\n%s",
					version, strings.Join(keys, "."), upPath, ourPath, diff)
			}
		})
	}
}

// TestCRDNamesMatchUpstream checks group, names and scope.
func TestCRDNamesMatchUpstream(t *testing.T) {
	for _, file := range crdFiles {
		t.Run(file, func(t *testing.T) {
			upstream, _ := upstreamCRD(t, file)
			ours, _ := ourCRD(t, file)
			for _, k := range []string{"group", "names", "scope"} {
				want, _ := lookup(upstream, "spec", k)
				got, _ := lookup(ours, "spec", k)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("spec.%s differs from upstream (-upstream +ours):\n%s", k, diff)
				}
			}
		})
	}
}

// TestDeclaredFieldsExistUpstream checks that every field this package declares
// under spec and status exists in upstream's schema with the same type, format
// and enum, recursively: our schema must be a subset of upstream's.
func TestDeclaredFieldsExistUpstream(t *testing.T) {
	for _, file := range crdFiles {
		t.Run(file, func(t *testing.T) {
			upstream, upPath := upstreamCRD(t, file)
			ours, ourPath := ourCRD(t, file)
			up, our := schemaOf(t, upstream, upPath), schemaOf(t, ours, ourPath)
			var problems []string
			for _, top := range []string{"spec", "status"} {
				o, err := lookup(our, "properties", top)
				if err != nil {
					t.Fatalf("%s: %v", ourPath, err)
				}
				u, _ := lookup(up, "properties", top)
				problems = append(problems, subsetProblems(top, o, u)...)
			}
			if len(problems) > 0 {
				t.Errorf("fields declared in apis/ do not match upstream %s:\n  %s", upPath, strings.Join(problems, "\n  "))
			}
		})
	}
}

// subsetProblems lists where the schema ours is not a subset of upstream's.
func subsetProblems(path string, ours, upstream interface{}) []string {
	o, _ := ours.(obj)
	if upstream == nil {
		return []string{fmt.Sprintf("%s: not in upstream schema", path)}
	}
	u, _ := upstream.(obj)
	var problems []string
	for _, k := range []string{"type", "format", "enum", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string"} {
		if !reflect.DeepEqual(o[k], u[k]) {
			problems = append(problems, fmt.Sprintf("%s: %s is %v, upstream has %v", path, k, o[k], u[k]))
		}
	}
	if oi, ok := o["items"]; ok {
		problems = append(problems, subsetProblems(path+"[]", oi, u["items"])...)
	}
	if oa, ok := o["additionalProperties"]; ok {
		problems = append(problems, subsetProblems(path+"{}", oa, u["additionalProperties"])...)
	}
	if oprops, ok := o["properties"].(obj); ok {
		uprops, _ := u["properties"].(obj)
		names := make([]string, 0, len(oprops))
		for name := range oprops {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			problems = append(problems, subsetProblems(path+"."+name, oprops[name], uprops[name])...)
		}
	}
	return problems
}
