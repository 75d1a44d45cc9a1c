package framework

import (
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	karmadaclientset "github.com/karmada-io/karmada/pkg/generated/clientset/versioned"

	failoverclientset "github.com/karmada-failover/lab/apis/generated/clientset/versioned"
)

// ClusterProxy gives typed access to one cluster of the lab: the Karmada API
// server or a member. It is built from a kubeconfig and a context, so the same
// scenarios run against any lab that writes upstream's kubeconfigs
// (karmada.config with context karmada-apiserver, members.config with member1..N).
type ClusterProxy struct {
	Name           string
	KubeconfigPath string
	Context        string

	config   *rest.Config
	kube     kubernetes.Interface
	dyn      dynamic.Interface
	karmada  karmadaclientset.Interface
	failover failoverclientset.Interface
}

// NewClusterProxy loads the kubeconfig context and builds the clients.
func NewClusterProxy(name, kubeconfig, context string) (*ClusterProxy, error) {
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("cluster %s: kubeconfig %s, context %s: %w", name, kubeconfig, context, err)
	}
	rc.QPS, rc.Burst = 50, 100
	p := &ClusterProxy{Name: name, KubeconfigPath: kubeconfig, Context: context, config: rc}
	if p.kube, err = kubernetes.NewForConfig(rc); err != nil {
		return nil, err
	}
	if p.dyn, err = dynamic.NewForConfig(rc); err != nil {
		return nil, err
	}
	if p.karmada, err = karmadaclientset.NewForConfig(rc); err != nil {
		return nil, err
	}
	if p.failover, err = failoverclientset.NewForConfig(rc); err != nil {
		return nil, err
	}
	return p, nil
}

// RESTConfig is a copy of the proxy's client configuration.
func (p *ClusterProxy) RESTConfig() *rest.Config { return rest.CopyConfig(p.config) }

// Kube is a Kubernetes clientset for the cluster.
func (p *ClusterProxy) Kube() kubernetes.Interface { return p.kube }

// Dynamic is a dynamic client for the cluster.
func (p *ClusterProxy) Dynamic() dynamic.Interface { return p.dyn }

// Karmada is upstream Karmada's clientset (Karmada API server only).
func (p *ClusterProxy) Karmada() karmadaclientset.Interface { return p.karmada }

// Failover is the clientset of the patched work.karmada.io/v1alpha2 API, which
// reads status.failoverHistory (Karmada API server only).
func (p *ClusterProxy) Failover() failoverclientset.Interface { return p.failover }
