package pod

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TokenRequester asks for a ServiceAccount token; client-go's
// CoreV1().ServiceAccounts(namespace) satisfies it.
type TokenRequester interface {
	CreateToken(ctx context.Context, name string, tr *authenticationv1.TokenRequest, opts metav1.CreateOptions) (*authenticationv1.TokenRequest, error)
}

// volume is the projected ServiceAccount volume of the pod: the files a
// kubelet writes, in dir.
type volume struct {
	dir       string
	namespace string
	name      string
	ttl       time.Duration
	tokens    TokenRequester
	now       func() time.Time
}

// newVolume connects to t's API server and writes ca.crt and namespace.
func newVolume(dir string, t *Token) (*volume, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: t.Kubeconfig}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: t.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", t.Kubeconfig, err)
	}
	ca, err := caData(cfg)
	if err != nil {
		return nil, err
	}
	// One request an hour: JSON, readable in the API server's audit log and by any test double.
	cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	v := &volume{dir: dir, namespace: t.Namespace, name: t.Name, ttl: t.TTL,
		tokens: cs.CoreV1().ServiceAccounts(t.Namespace), now: time.Now}
	if err := writeFile(dir, "ca.crt", ca, 0o644); err != nil {
		return nil, err
	}
	return v, writeFile(dir, "namespace", []byte(t.Namespace), 0o644)
}

func caData(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 {
		return cfg.CAData, nil
	}
	if cfg.CAFile != "" {
		return os.ReadFile(cfg.CAFile)
	}
	return nil, fmt.Errorf("the kubeconfig has no certificate authority for the API server")
}

// refresh writes a new token and returns when it should be renewed.
func (v *volume) refresh(ctx context.Context) (time.Time, error) {
	seconds := int64(v.ttl / time.Second)
	tr, err := v.tokens.CreateToken(ctx, v.name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds},
	}, metav1.CreateOptions{})
	if err != nil {
		return time.Time{}, fmt.Errorf("TokenRequest for %s/%s: %w", v.namespace, v.name, err)
	}
	if err := writeFile(v.dir, "token", []byte(tr.Status.Token), 0o600); err != nil {
		return time.Time{}, err
	}
	now := v.now()
	lifetime := tr.Status.ExpirationTimestamp.Sub(now)
	if lifetime <= 0 {
		lifetime = v.ttl
	}
	return now.Add(lifetime * 8 / 10), nil
}

// renew keeps the token fresh until ctx ends, as the kubelet does. It
// compares the wall clock with the renewal time every check (a minute), so a
// machine that slept past it renews at once; failures are retried with a
// back-off from 10 s to the check period while the current token is valid.
func (v *volume) renew(ctx context.Context, next time.Time, check time.Duration) {
	retry := 10 * time.Second
	for {
		wait := min(time.Until(next), check)
		if wait < 0 {
			wait = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if v.now().Before(next) {
			continue
		}
		n, err := v.refresh(ctx)
		if err != nil {
			log.Printf("lab-pod: renewing the ServiceAccount token: %v; retrying in %s", err, retry)
			next = v.now().Add(retry)
			retry = min(2*retry, check)
			continue
		}
		next, retry = n, 10*time.Second
	}
}

// writeFile replaces dir/name atomically: a reader sees the old file or the new one.
func writeFile(dir, name string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(dir, "."+name+"-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}
