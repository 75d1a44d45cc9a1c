package kind

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/manifest"
	"github.com/karmada-failover/lab/lab/internal/poll"
)

// Kyverno on the kind lab (LAB_RESTORE=kyverno, or the e2e suite switching a running
// lab's members with SetRestore). Where images are pulled, Kyverno's chart from its
// repository. Where the lab builds its images, the same chart from Kyverno's Go module
// (make kyverno copies it next to the binaries it builds), the admission controller
// only (manifests/kyverno-values.yaml), with its two images built from those binaries
// (images/build-kyverno-images.sh) and loaded into the members. Either way the restore
// policy (restore/deploy/kyverno-clusterpolicy.yaml) calls the member's restore webhook's
// /locate by its Service, and the webhook's own registration is gone while Kyverno
// restores: both decide alike, from the same rules, and only one of them acts.

// restoreCA is the CA of the member's restore webhook serving certificate, base64 and PEM.
func (l *Lab) restoreCA(ctx context.Context, member string) (string, []byte, error) {
	k, err := l.kubeOn(member)
	if err != nil {
		return "", nil, err
	}
	s, err := k.cs.CoreV1().Secrets("flink-restore").Get(ctx, "flink-restore-webhook-tls", metav1.GetOptions{})
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", member, err)
	}
	caPEM := s.Data["ca.crt"]
	if len(caPEM) == 0 {
		return "", nil, fmt.Errorf("%s: secret flink-restore/flink-restore-webhook-tls has no ca.crt", member)
	}
	return base64.StdEncoding.EncodeToString(caPEM), caPEM, nil
}

// applyRestoreDeploy renders restore/deploy/<src> for member, old replaced by new,
// into the manifests folder and applies it.
func (l *Lab) applyRestoreDeploy(ctx context.Context, member, src, old, repl string) error {
	out := filepath.Join(l.Cfg.ManifestDir(), strings.TrimSuffix(src, ".yaml")+"-"+member+".yaml")
	if err := manifest.RenderFile(filepath.Join(l.Cfg.Root, "restore", "deploy", src), out, 0o644, old, repl); err != nil {
		return err
	}
	return l.applyOn(ctx, member, out)
}

// registerRestoreWebhook registers the member's restore webhook with its API server
// (restore/deploy/mutatingwebhookconfiguration-kind.yaml, with its Service).
func (l *Lab) registerRestoreWebhook(ctx context.Context, member string) error {
	caB64, _, err := l.restoreCA(ctx, member)
	if err != nil {
		return err
	}
	return l.applyRestoreDeploy(ctx, member, "mutatingwebhookconfiguration-kind.yaml", "{{caBundle}}", caB64)
}

// kyvernoDir is the folder make kyverno built Kyverno's binaries and copied its chart
// into, checked against the chart version the pulled path installs.
func (l *Lab) kyvernoDir() (string, error) {
	if l.Cfg.Bins.Kyverno == "" {
		return "", fmt.Errorf("Kyverno with images built here runs Kyverno built from its Go module: run make kyverno")
	}
	dir := filepath.Dir(l.Cfg.Bins.Kyverno)
	for _, f := range []string{"kyverno", "kyverno-init", filepath.Join("chart", "Chart.yaml")} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return "", fmt.Errorf("Kyverno with images built here: %w (run make kyverno)", err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "chart", "Chart.yaml"))
	if err != nil {
		return "", err
	}
	if !strings.Contains(string(b), "\nversion: "+Kyverno.Version+"\n") {
		return "", fmt.Errorf("%s/chart is not Kyverno's chart %s, which the lab pins (lab/kind/versions.go); run make kyverno", dir, Kyverno.Version)
	}
	return dir, nil
}

// loadKyvernoImages builds Kyverno's images from make kyverno's binaries and loads
// them into every member.
func (l *Lab) loadKyvernoImages(ctx context.Context, dir string) error {
	out, err := l.runIn(ctx, l.Cfg.Root, nil, "build-kyverno-images", filepath.Join(l.Cfg.Root, "lab", "kind", "images", "build-kyverno-images.sh"), dir)
	if err != nil {
		return err
	}
	images := strings.Fields(out)
	if len(images) != 2 {
		return fmt.Errorf("build-kyverno-images.sh printed %q, want two image references", out)
	}
	for _, m := range l.Cfg.MemberNames() {
		if err := l.kindLoad(ctx, m, images...); err != nil {
			return err
		}
	}
	return nil
}

// installKyverno installs Kyverno's chart in member: from its repository where images
// are pulled, from make kyverno's copy (dir) otherwise.
func (l *Lab) installKyverno(ctx context.Context, member, dir string) error {
	if dir == "" {
		return l.helmInstall(ctx, member, Kyverno)
	}
	valuesFile, err := l.writeValues("kyverno-values.yaml")
	if err != nil {
		return err
	}
	return l.helmInstallFrom(ctx, member, Kyverno, []string{filepath.Join(dir, "chart")}, "--values", valuesFile)
}

// applyKyvernoPolicy applies the restore ClusterPolicy to member, trusting the restore
// webhook's CA, and waits until Kyverno reports it ready.
func (l *Lab) applyKyvernoPolicy(ctx context.Context, member string) error {
	_, caPEM, err := l.restoreCA(ctx, member)
	if err != nil {
		return err
	}
	// Kyverno's own webhook validates the policy: it may take a moment to be registered.
	if err := poll.Until(ctx, 2*time.Minute, 2*time.Second, "Kyverno to accept its policy in "+member, func(ctx context.Context) (bool, error) {
		err := l.applyRestoreDeploy(ctx, member, "kyverno-clusterpolicy.yaml", "{{caBundle-PEM}}", manifest.IndentPEM(string(caPEM), "                "))
		return err == nil, err
	}); err != nil {
		return err
	}
	k, err := l.kubeOn(member)
	if err != nil {
		return err
	}
	return k.waitCondition(ctx, "kyverno.io/v1", "ClusterPolicy", "", lab.KyvernoPolicy, "Ready", 3*time.Minute)
}

// tearDownKyverno removes member's Kyverno: its policy first (while Kyverno runs, so
// that it takes its webhook rules back), then the release (its CRDs with it), then the
// webhook configurations and leases Kyverno made itself, so that nothing calls a Kyverno
// that is gone and a Kyverno installed later starts afresh.
func (l *Lab) tearDownKyverno(ctx context.Context, member string) error {
	k, err := l.kubeOn(member)
	if err != nil {
		return err
	}
	// Without Kyverno's CRD there is no policy to delete.
	if err := k.delete(ctx, "kyverno.io/v1", "ClusterPolicy", "", lab.KyvernoPolicy, time.Minute); err != nil {
		return err
	}
	if _, err := l.run(ctx, "helm-uninstall-"+Kyverno.Release+"-"+member, l.Cfg.Bins.Helm, "uninstall", Kyverno.Release, "--namespace", Kyverno.Namespace,
		"--kubeconfig", l.kubeconfigOf(member), "--ignore-not-found", "--wait", "--timeout", "5m"); err != nil {
		return err
	}
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		if err := k.deleteAll(ctx, "admissionregistration.k8s.io/v1", kind, "", "webhook.kyverno.io/managed-by=kyverno"); err != nil {
			return err
		}
	}
	return k.deleteAll(ctx, "coordination.k8s.io/v1", "Lease", Kyverno.Namespace, "")
}

// waitKyvernoAdmission waits until member's Kyverno acts on admission (lab.WaitKyvernoAdmission).
func (l *Lab) waitKyvernoAdmission(ctx context.Context, member string) error {
	rc, err := clientcmd.BuildConfigFromFlags("", l.kubeconfigOf(member))
	if err != nil {
		return err
	}
	return lab.WaitKyvernoAdmission(ctx, rc, member)
}

// switchRestore switches every member to mode. The paths overlap instead of leaving a
// gap in which a failed-over FlinkDeployment would be admitted without a decision: to
// kyverno, Kyverno and its policy come (ready) before the webhook's registration goes;
// to webhook, the registration comes back before Kyverno goes. The restore webhook keeps
// running either way: the policy calls its /locate.
func (l *Lab) switchRestore(ctx context.Context, mode string) error {
	if mode == config.RestoreWebhook {
		for _, m := range l.Cfg.MemberNames() {
			if err := l.registerRestoreWebhook(ctx, m); err != nil {
				return err
			}
			if err := l.tearDownKyverno(ctx, m); err != nil {
				return fmt.Errorf("%s: %w (the restore webhook restores there again; run the switch again to remove Kyverno)", m, err)
			}
		}
		return nil
	}
	dir := ""
	if l.images == ImagesBuild {
		var err error
		if dir, err = l.kyvernoDir(); err != nil {
			return err
		}
		if err := l.loadKyvernoImages(ctx, dir); err != nil {
			return err
		}
	}
	for _, m := range l.Cfg.MemberNames() {
		if err := l.installKyverno(ctx, m, dir); err != nil {
			return fmt.Errorf("%s: %w (the restore webhook still restores there; run the switch again, either way)", m, err)
		}
		if err := l.applyKyvernoPolicy(ctx, m); err != nil {
			return fmt.Errorf("%s: %w (the restore webhook still restores there; run the switch again, either way)", m, err)
		}
		k, err := l.kubeOn(m)
		if err != nil {
			return err
		}
		if err := k.delete(ctx, "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "", lab.RestoreWebhookConfiguration, 0); err != nil {
			return err
		}
		// Only now is Kyverno's the only restore on admission: the webhook's own
		// refusal no longer comes first.
		if err := l.waitKyvernoAdmission(ctx, m); err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
	}
	return nil
}

// upKyverno is lab-up's step for LAB_RESTORE=kyverno: the members came up restoring by
// the webhook (installRestore) and switch once the FlinkDeployment CRD the policy names
// is there (installFlink where images are built, the operator's chart where pulled).
func (l *Lab) upKyverno(ctx context.Context) error {
	if l.restore != config.RestoreKyverno {
		fmt.Fprintln(l.out, "   skipped: the members restore by the webhook (LAB_RESTORE=kyverno switches them to Kyverno)")
		return nil
	}
	return l.switchRestore(ctx, config.RestoreKyverno)
}

// Restore is the members' restore mode (lab.RestoreModes): the running lab's record, or
// LAB_RESTORE for a lab about to come up.
func (l *Lab) Restore() string {
	if st, err := l.State(); err == nil && st.Restore != "" {
		return st.Restore
	}
	return l.restore
}

// SetRestore switches every member's restore path (lab.RestoreModes) and records it. It
// is idempotent: a switch that failed half-way is finished, or undone, by calling it
// again with either mode.
func (l *Lab) SetRestore(ctx context.Context, mode string) error {
	if err := config.CheckRestore(mode); err != nil {
		return err
	}
	st, err := l.State()
	if err != nil {
		return err
	}
	if !st.Ready {
		return fmt.Errorf("the kind lab in %s is not up (make lab-up LAB_PROVIDER=kind)", l.Cfg.Dir)
	}
	l.images = st.Images
	if l.images == "" && st.FlinkRunner {
		l.images = ImagesBuild // recorded before lab.json named its images
	}
	if err := l.switchRestore(ctx, mode); err != nil {
		return err
	}
	st.Restore, l.restore = mode, mode
	// Kyverno's Deployments came or went: the record lists what runs now.
	st.Components = l.components(ctx)
	return l.writeState(st)
}
