package lab

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	karmadaclientset "github.com/karmada-io/karmada/pkg/generated/clientset/versioned"

	"github.com/karmada-failover/lab/lab/config"
)

// ParseTaint parses KEY[=VALUE]:EFFECT, as `karmadactl taint` and `kubectl taint` take it.
func ParseTaint(s string) (corev1.Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	key, value, _ := strings.Cut(kv, "=")
	t := corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}
	switch {
	case !ok || key == "":
		return t, fmt.Errorf("taint %q: want KEY[=VALUE]:EFFECT", s)
	case t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectPreferNoSchedule && t.Effect != corev1.TaintEffectNoExecute:
		return t, fmt.Errorf("taint %q: effect must be NoSchedule, PreferNoSchedule or NoExecute", s)
	}
	return t, nil
}

// TaintCluster adds a taint to a Karmada Cluster, replacing one with the same key and effect,
// or removes it, through the Karmada API server alone: the same on every lab.
func TaintCluster(ctx context.Context, kc karmadaclientset.Interface, cluster string, taint corev1.Taint, remove bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := kc.ClusterV1alpha1().Clusters().Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var kept []corev1.Taint
		for _, t := range c.Spec.Taints {
			if t.Key == taint.Key && t.Effect == taint.Effect {
				continue
			}
			kept = append(kept, t)
		}
		if !remove {
			t := taint
			if t.TimeAdded == nil {
				now := metav1.Now()
				t.TimeAdded = &now
			}
			kept = append(kept, t)
		}
		c.Spec.Taints = kept
		_, err = kc.ClusterV1alpha1().Clusters().Update(ctx, c, metav1.UpdateOptions{})
		return err
	})
}

// KarmadaClient is a client of the Karmada API server of cfg's lab (context karmada-apiserver
// of karmada.config).
func KarmadaClient(cfg *config.Config) (karmadaclientset.Interface, error) {
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: cfg.KarmadaKubeconfig()},
		&clientcmd.ConfigOverrides{CurrentContext: config.KarmadaContext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.KarmadaKubeconfig(), err)
	}
	return karmadaclientset.NewForConfig(rc)
}
