package kind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karmada-failover/lab/lab/internal/poll"
)

// fieldManager is the lab's name in the managed fields of what it applies.
const fieldManager = "karmada-failover-lab"

// kube is a client of one cluster of the lab: typed, dynamic, and a REST mapper
// from the cluster's discovery.
type kube struct {
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	mapper meta.RESTMapper
	where  string
}

// newKube is a client of the kubeconfig's context ("" = its current context).
func newKube(kubeconfig, context string) (*kube, error) {
	where := kubeconfig
	if context != "" {
		where += ", context " + context
	}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return newKubeFor(rc, where)
}

func newKubeFor(rc *rest.Config, where string) (*kube, error) {
	rc = rest.CopyConfig(rc)
	rc.UserAgent = fieldManager
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))
	return &kube{cs: cs, dyn: dyn, mapper: mapper, where: where}, nil
}

// applyFile applies every object of a YAML or JSON file (documents separated by
// ---) with server-side apply, as `kubectl apply --server-side` does, taking over
// fields another manager set.
func (k *kube) applyFile(ctx context.Context, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := k.apply(ctx, b); err != nil {
		return fmt.Errorf("applying %s to %s: %w", path, k.where, err)
	}
	return nil
}

// apply applies every object of a YAML or JSON stream with server-side apply.
func (k *kube) apply(ctx context.Context, manifest []byte) error {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if len(obj.Object) == 0 {
			continue
		}
		gvk := obj.GroupVersionKind()
		m, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		var ri dynamic.ResourceInterface = k.dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := obj.GetNamespace()
			if ns == "" {
				ns = metav1.NamespaceDefault
			}
			ri = k.dyn.Resource(m.Resource).Namespace(ns)
		}
		if _, err := ri.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
		}
	}
}

// kubeOn is a client of one of the lab's kind clusters (HostCluster or a member).
func (l *Lab) kubeOn(cluster string) (*kube, error) {
	return newKube(l.kubeconfigOf(cluster), "")
}

// resource is the dynamic client of kind in apiVersion, in namespace ns when
// the kind is namespaced.
func (k *kube) resource(apiVersion, kind, ns string) (dynamic.ResourceInterface, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	m, err := k.mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: kind}, gv.Version)
	if err != nil {
		return nil, fmt.Errorf("%s in %s: %w", kind, k.where, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return k.dyn.Resource(m.Resource).Namespace(ns), nil
	}
	return k.dyn.Resource(m.Resource), nil
}

// get reads one object.
func (k *kube) get(ctx context.Context, apiVersion, kind, ns, name string) (*unstructured.Unstructured, error) {
	ri, err := k.resource(apiVersion, kind, ns)
	if err != nil {
		return nil, err
	}
	return ri.Get(ctx, name, metav1.GetOptions{})
}

// delete deletes an object if it exists (its dependents in the background) and,
// with wait > 0, waits until it is gone, as `kubectl delete --ignore-not-found
// --wait` does. A kind the cluster does not serve has nothing to delete.
func (k *kube) delete(ctx context.Context, apiVersion, kind, ns, name string, wait time.Duration) error {
	ri, err := k.resource(apiVersion, kind, ns)
	if meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return err
	}
	bg := metav1.DeletePropagationBackground
	if err := ri.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg}); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("deleting %s %s in %s: %w", kind, name, k.where, err)
	}
	if wait <= 0 {
		return nil
	}
	return poll.Until(ctx, wait, time.Second, fmt.Sprintf("%s %s deleted in %s", kind, name, k.where), func(ctx context.Context) (bool, error) {
		_, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// deleteAll deletes every object of kind in ns (all namespaces' kinds: ns "")
// matching the label selector ("" = all), as `kubectl delete KIND -l SEL
// --ignore-not-found` does.
func (k *kube) deleteAll(ctx context.Context, apiVersion, kind, ns, selector string) error {
	ri, err := k.resource(apiVersion, kind, ns)
	if meta.IsNoMatchError(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := ri.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: selector}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s (%q) in %s: %w", kind, selector, k.where, err)
	}
	return nil
}

// waitCondition waits until the object's status condition cond is True, as
// `kubectl wait --for=condition=COND` does (an object not there yet is waited for).
func (k *kube) waitCondition(ctx context.Context, apiVersion, kind, ns, name, cond string, timeout time.Duration) error {
	what := fmt.Sprintf("%s %s %s in %s", kind, name, cond, k.where)
	return poll.Until(ctx, timeout, 2*time.Second, what, func(ctx context.Context) (bool, error) {
		obj, err := k.get(ctx, apiVersion, kind, ns, name)
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == cond {
				if m["status"] == "True" {
					return true, nil
				}
				return false, fmt.Errorf("%s is %v: %v", cond, m["status"], m["message"])
			}
		}
		return false, fmt.Errorf("no condition %s yet", cond)
	})
}

// rolloutStatus waits until Deployment ns/name has rolled out, as `kubectl
// rollout status` does: its generation observed, every replica updated and
// available, no old replica left. A rollout past its progress deadline fails.
func (k *kube) rolloutStatus(ctx context.Context, ns, name string, timeout time.Duration) error {
	what := fmt.Sprintf("deployment %s/%s rolled out in %s", ns, name, k.where)
	var deadline error
	err := poll.Until(ctx, timeout, 2*time.Second, what, func(ctx context.Context) (bool, error) {
		d, err := k.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if d.Generation > d.Status.ObservedGeneration {
			return false, errors.New("its new generation is not observed yet")
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
				deadline = fmt.Errorf("%s: exceeded its progress deadline: %s", what, c.Message)
				return true, nil
			}
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		switch {
		case d.Status.UpdatedReplicas < want:
			return false, fmt.Errorf("%d of %d replicas updated", d.Status.UpdatedReplicas, want)
		case d.Status.Replicas > d.Status.UpdatedReplicas:
			return false, fmt.Errorf("%d old replicas pending termination", d.Status.Replicas-d.Status.UpdatedReplicas)
		case d.Status.AvailableReplicas < d.Status.UpdatedReplicas:
			return false, fmt.Errorf("%d of %d updated replicas available", d.Status.AvailableReplicas, d.Status.UpdatedReplicas)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	return deadline
}

// readyz asks the API server whether it is ready (GET /readyz).
func (k *kube) readyz(ctx context.Context) error {
	_, err := k.cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", k.where, err)
	}
	return nil
}
