package main

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"

	"github.com/karmada-failover/lab/restore/webhook"
)

// kubeClients are the optional clients of the member's API server: for
// TokenReview (bearer tokens on /locate) and Events. Without a kubeconfig
// outside a pod there are none.
type kubeClients struct {
	auth        authenticationv1client.AuthenticationV1Interface
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
}

// newKubeClients uses kubeconfig, or the in-cluster config when running in a
// pod; neither is not an error.
func newKubeClients(kubeconfig string) (*kubeClients, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
		if errors.Is(err, rest.ErrNotInCluster) {
			return &kubeClients{}, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("kube client: %w", err)
	}
	cfg.UserAgent = "flink-restore-webhook"
	auth, err := authenticationv1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube client: %w", err)
	}
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube client: %w", err)
	}
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: core.Events("")})
	return &kubeClients{
		auth:        auth,
		broadcaster: b,
		recorder:    b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "flink-restore-webhook"}),
	}, nil
}

func (k *kubeClients) tokenReviewer() (webhook.TokenReviewer, error) {
	if k.auth == nil {
		return nil, nil
	}
	return webhook.NewKubeTokenReviewer(k.auth, webhook.DefaultTokenReviewTTL)
}

func (k *kubeClients) eventRecorder() webhook.EventRecorder {
	if k.recorder == nil {
		return nil
	}
	return k.recorder
}

// shutdown flushes pending Events.
func (k *kubeClients) shutdown() {
	if k.broadcaster != nil {
		k.broadcaster.Shutdown()
	}
}
