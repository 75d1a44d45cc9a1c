package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/karmada-failover/lab/lab/internal/manifest"
	"github.com/karmada-failover/lab/lab/internal/poll"
)

// kubectl runs the lab's own kubectl (built at the lab's Kubernetes version)
// against the Karmada API server.
func (l *Lab) kubectl(ctx context.Context, args ...string) error {
	return l.kubectlWith(ctx, l.Cfg.KarmadaKubeconfig(), "", args...)
}

// kubectlWith runs the lab's kubectl with a kubeconfig and, if set, a context.
func (l *Lab) kubectlWith(ctx context.Context, kubeconfig, context string, args ...string) error {
	full := []string{"--kubeconfig=" + kubeconfig}
	if context != "" {
		full = append(full, "--context="+context)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, l.Cfg.Bins.Kubectl, full...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// render copies src to dst replacing each old with new (see manifest.Render).
func render(src, dst string, replacements ...string) error {
	return manifest.RenderFile(src, dst, 0o644, replacements...)
}

// installCRDs installs upstream's CRDs from the tree matching the binaries
// (charts/karmada/_crds, its kustomization and the conversion-webhook patches
// of ResourceBinding and ClusterResourceBinding), with the conversion webhook
// pointed at the local karmada-webhook.
func (l *Lab) installCRDs(ctx context.Context) error {
	src := filepath.Join(l.sourceTree(), "charts", "karmada", "_crds")
	dst := filepath.Join(l.Cfg.ManifestDir(), "_crds")
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := copyTree(src, dst); err != nil {
		return fmt.Errorf("copying CRDs from %s (run `make build` first): %w", src, err)
	}
	ca, err := l.caBundle()
	if err != nil {
		return err
	}
	url := "https://" + hostPort(l.Cfg.Ports.Webhook) + "/convert"
	for _, p := range []string{"webhook_in_resourcebindings.yaml", "webhook_in_clusterresourcebindings.yaml"} {
		f := filepath.Join(dst, "patches", p)
		if err := render(f, f, "https://{{name}}.{{namespace}}.svc:443/convert", url, "{{caBundle}}", ca); err != nil {
			return err
		}
	}
	if err := l.kubectl(ctx, "apply", "--server-side", "--force-conflicts", "-k", dst); err != nil {
		return err
	}
	return l.kubectl(ctx, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
}

// installBase creates the karmada-system namespace and the RBAC upstream's
// deploy script applies.
func (l *Lab) installBase(ctx context.Context) error {
	deploy := filepath.Join(l.sourceTree(), "artifacts", "deploy")
	for _, f := range []string{"namespace.yaml", "admin-clusterrole-aggregation.yaml", "cluster-proxy-admin-rbac.yaml"} {
		if err := l.kubectl(ctx, "apply", "--server-side", "-f", filepath.Join(deploy, f)); err != nil {
			return err
		}
	}
	return nil
}

// installAPIService registers the aggregated API server (cluster.karmada.io)
// at its loopback address: an ExternalName Service resolves to 127.0.0.1 and
// the APIService names the port, and the aggregator checks the certificate for
// karmada-aggregated-apiserver.karmada-system.svc.
func (l *Lab) installAPIService(ctx context.Context) error {
	ca, err := l.caBundle()
	if err != nil {
		return err
	}
	doc := fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: karmada-aggregated-apiserver
  namespace: karmada-system
spec:
  type: ExternalName
  externalName: %[1]s
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1alpha1.cluster.karmada.io
  labels:
    app: karmada-aggregated-apiserver
    apiserver: "true"
spec:
  caBundle: %[2]s
  group: cluster.karmada.io
  groupPriorityMinimum: 2000
  service:
    name: karmada-aggregated-apiserver
    namespace: karmada-system
    port: %[3]d
  version: v1alpha1
  versionPriority: 10
`, "localhost", ca, l.Cfg.Ports.AggregatedAPIServer)
	f := filepath.Join(l.Cfg.ManifestDir(), "aggregated-apiserver-apiservice.yaml")
	if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
		return err
	}
	if err := l.kubectl(ctx, "apply", "--server-side", "-f", f); err != nil {
		return err
	}
	return l.kubectl(ctx, "wait", "--for=condition=Available", "--timeout=60s", "apiservice/v1alpha1.cluster.karmada.io")
}

// installWebhookConfiguration applies upstream's webhook configuration with its
// URLs pointed at the local karmada-webhook.
func (l *Lab) installWebhookConfiguration(ctx context.Context) error {
	ca, err := l.caBundle()
	if err != nil {
		return err
	}
	src := filepath.Join(l.sourceTree(), "artifacts", "deploy", "webhook-configuration.yaml")
	dst := filepath.Join(l.Cfg.ManifestDir(), "webhook-configuration.yaml")
	if err := render(src, dst, "https://karmada-webhook.karmada-system.svc:443", "https://"+hostPort(l.Cfg.Ports.Webhook), "{{caBundle}}", ca); err != nil {
		return err
	}
	return l.kubectl(ctx, "apply", "--server-side", "--force-conflicts", "-f", dst)
}

// installClusterTaintPolicy applies the lab's ClusterTaintPolicy, which turns
// a NotReady member into a NoExecute taint (cluster failover).
func (l *Lab) installClusterTaintPolicy(ctx context.Context) error {
	return l.kubectl(ctx, "apply", "--server-side", "-f", filepath.Join(l.Cfg.Root, "lab", "manifests", "karmada", "cluster-taint-policy.yaml"))
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// waitEstablished waits up to a minute for CRD name to be Established in the cluster of
// kubeconfig and kubeContext. kubectl wait gives up at once, instead of waiting, when it reads
// the CRD before the API server wrote its first conditions (".status.conditions accessor
// error", seen with the operator's large FlinkDeployment CRD), so it is asked again.
func (l *Lab) waitEstablished(ctx context.Context, kubeconfig, kubeContext, name string) error {
	var last error
	err := poll.Until(ctx, time.Minute, time.Second, "CRD "+name+" Established", func(ctx context.Context) (bool, error) {
		last = l.kubectlWith(ctx, kubeconfig, kubeContext, "wait", "--for=condition=Established", "--timeout=10s", "crd/"+name)
		return last == nil, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w: %v", err, last)
	}
	return err
}
