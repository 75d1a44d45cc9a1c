package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Resources dumped from the Karmada API server after a failed spec (namespaced
// ones from the spec's namespace, Works from every execution namespace).
var karmadaDumps = []struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}{
	{schema.GroupVersionResource{Group: "cluster.karmada.io", Version: "v1alpha1", Resource: "clusters"}, false},
	{schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "resourcebindings"}, true},
	{schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "clusterresourcebindings"}, false},
	{schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha1", Resource: "works"}, false},
	{schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "propagationpolicies"}, true},
	{schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "overridepolicies"}, true},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true},
	{schema.GroupVersionResource{Version: "v1", Resource: "events"}, true},
}

var memberDumps = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Version: "v1", Resource: "pods"},
	{Version: "v1", Resource: "events"},
}

// DumpResources writes the Karmada and member objects of namespace as YAML
// under dir/resources and copies the lab's process logs under dir/logs. It
// collects what it can: an unreachable member is noted, not fatal.
func (l *Lab) DumpResources(ctx context.Context, namespace, dir string) error {
	var problems []string
	dump := func(p *ClusterProxy, gvr schema.GroupVersionResource, ns string) {
		list, err := p.Dynamic().Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s %s: %v", p.Name, gvr.Resource, err))
			return
		}
		b, err := yaml.Marshal(list.UnstructuredContent())
		if err != nil {
			problems = append(problems, err.Error())
			return
		}
		f := filepath.Join(dir, "resources", p.Name, gvr.Resource+".yaml")
		_ = os.MkdirAll(filepath.Dir(f), 0o755)
		_ = os.WriteFile(f, b, 0o644)
	}
	for _, d := range karmadaDumps {
		ns := ""
		if d.namespaced {
			ns = namespace
		}
		dump(l.Karmada, d.gvr, ns)
	}
	for _, name := range l.MemberNames() {
		for _, gvr := range memberDumps {
			dump(l.Members[name], gvr, namespace)
		}
	}
	if l.Provider != nil {
		if err := l.Provider.CollectLogs(ctx, filepath.Join(dir, "logs")); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		_ = os.WriteFile(filepath.Join(dir, "dump-problems.txt"), []byte(strings.Join(problems, "\n")+"\n"), 0o644)
	}
	return nil
}
