package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/manifest"
	"github.com/karmada-failover/lab/lab/internal/pki"
	"github.com/karmada-failover/lab/lab/internal/poll"
	"github.com/karmada-failover/lab/lab/internal/proc"
	"github.com/karmada-failover/lab/restore/cmd/flink-restore-webhook/app/options"
)

// Kyverno in the hermetic lab (LAB_RESTORE=kyverno): every member runs
// Kyverno's admission controller, built from its Go module (make kyverno), and
// the ClusterPolicy the kind lab applies (restore/deploy/kyverno-clusterpolicy.yaml),
// which asks the member's restore webhook's /locate for the checkpoint and
// mutates the FlinkDeployment itself; the restore webhook is not registered
// as a webhook then.
//
// Kyverno is in-cluster software: it listens on every address and takes the
// ServiceAccount token for its service calls from the in-cluster path. So it
// runs in a lab pod (lab/cmd/lab-pod, Linux namespaces): in-cluster
// configuration (KUBERNETES_SERVICE_HOST/PORT and a renewed token of
// kyverno/kyverno-admission-controller), its webhook published on
// 127.0.0.1:<Kyverno+i> only, and the pod's 127.0.0.1:24600 leading to the
// member's restore webhook, as the Service of a real cluster would. Its
// serving pair is the lab's (pki.Kyverno), in Secrets it does not manage.
// The ServiceAccount is bound to cluster-admin: the lab stands in for the
// chart's ClusterRoles, which the kind lab installs.
const (
	kyvernoNamespace      = "kyverno"
	kyvernoServiceAccount = "kyverno-admission-controller"
	kyvernoCASecret       = "kyverno-lab-ca"
	kyvernoTLSSecret      = "kyverno-lab-tls"
	// kyvernoPodPort is Kyverno's webhook port inside its pod.
	kyvernoPodPort = 9443
	// kubernetesServicePort is where the pod reaches its member's API server.
	kubernetesServicePort = 443
	// kyvernoPolicyURL is the restore service as the policy names it in a cluster;
	// from inside the lab's pod it is https://<options.DefaultListen>/locate.
	kyvernoPolicyURL = "https://flink-restore-webhook.flink-restore.svc:443/locate"
)

func kyvernoName(member string) string { return "kyverno-" + member }

// restoreMode is how the lab's members restore: the mode recorded in lab.json
// (webhook for a lab recorded before there was a choice), LAB_RESTORE only
// for a lab about to come up.
func (l *Lab) restoreMode() string {
	st, err := l.State()
	switch {
	case err != nil:
		return l.Cfg.Restore
	case st.Restore == "":
		return config.RestoreWebhook
	default:
		return st.Restore
	}
}

// kyvernoReady says why the lab cannot run Kyverno, or nil.
func (l *Lab) kyvernoReady() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("LAB_RESTORE=kyverno runs Kyverno in a lab pod, which needs Linux namespaces; on %s use the kind lab", runtime.GOOS)
	}
	var missing []string
	if l.Cfg.Bins.Kyverno == "" {
		missing = append(missing, "Kyverno (make kyverno)")
	} else if _, err := os.Stat(l.Cfg.Bins.Kyverno); err != nil {
		missing = append(missing, "Kyverno at "+l.Cfg.Bins.Kyverno+" (make kyverno)")
	}
	if l.Cfg.Bins.Pod == "" {
		missing = append(missing, "lab-pod (make lab-cli)")
	} else if _, err := os.Stat(l.Cfg.Bins.Pod); err != nil {
		missing = append(missing, "lab-pod at "+l.Cfg.Bins.Pod+" (make lab-cli)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("LAB_RESTORE=kyverno: missing %s", strings.Join(missing, ", "))
	}
	return nil
}

func (l *Lab) kyvernoAddr(member string) (string, error) {
	m, err := l.Cfg.Member(member)
	if err != nil {
		return "", err
	}
	return hostPort(l.Cfg.Ports.KyvernoFor(m)), nil
}

func (l *Lab) kyvernoProbe(member string) (proc.Probe, error) {
	addr, err := l.kyvernoAddr(member)
	if err != nil {
		return proc.Probe{}, err
	}
	return proc.Probe{URL: "https://" + addr + "/health/liveness", CAFile: l.caFile(), StartTimeout: 3 * time.Minute}, nil
}

// installKyverno puts what Kyverno needs in member: its CRDs, namespace,
// ServiceAccount and its binding, and its serving pair.
func (l *Lab) installKyverno(ctx context.Context, member string) error {
	crds := filepath.Join(filepath.Dir(l.Cfg.Bins.Kyverno), "crds")
	files, err := filepath.Glob(filepath.Join(crds, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no Kyverno CRDs in %s (make kyverno copies them from its module)", crds)
	}
	if err := l.kubectlMember(ctx, member, "apply", "--server-side", "-f", crds); err != nil {
		return err
	}
	for _, f := range files {
		// kyverno.io_clusterpolicies.yaml defines clusterpolicies.kyverno.io.
		group, plural, ok := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".yaml"), "_")
		if !ok {
			return fmt.Errorf("%s: not a <group>_<plural>.yaml CRD file", f)
		}
		if err := l.waitEstablished(ctx, l.Cfg.MembersKubeconfig(), member, plural+"."+group); err != nil {
			return err
		}
	}
	cs, err := l.memberClient(member)
	if err != nil {
		return err
	}
	ca, err := os.ReadFile(l.caFile())
	if err != nil {
		return err
	}
	crt, key := l.pki(pki.Kyverno)
	tlsCrt, err := os.ReadFile(crt)
	if err != nil {
		return err
	}
	tlsKey, err := os.ReadFile(key)
	if err != nil {
		return err
	}
	return applyKyvernoObjects(ctx, cs, ca, tlsCrt, tlsKey)
}

// applyKyvernoObjects creates or updates Kyverno's namespace, ServiceAccount,
// ClusterRoleBinding and TLS Secrets.
func applyKyvernoObjects(ctx context.Context, cs kubernetes.Interface, ca, tlsCrt, tlsKey []byte) error {
	labels := map[string]string{"app.kubernetes.io/part-of": "karmada-failover-lab"}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kyvernoNamespace, Labels: labels}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if _, err := cs.CoreV1().ServiceAccounts(kyvernoNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: kyvernoServiceAccount, Labels: labels}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kyverno-lab:admission-controller", Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: kyvernoNamespace, Name: kyvernoServiceAccount}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	// Without Kyverno's managed-by label: Kyverno uses the pair and never replaces it.
	secrets := []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: kyvernoCASecret, Namespace: kyvernoNamespace, Labels: labels},
			Type: corev1.SecretTypeOpaque, Data: map[string][]byte{corev1.TLSCertKey: ca}},
		{ObjectMeta: metav1.ObjectMeta{Name: kyvernoTLSSecret, Namespace: kyvernoNamespace, Labels: labels},
			Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: tlsCrt, corev1.TLSPrivateKeyKey: tlsKey}},
	}
	for _, s := range secrets {
		_, err := cs.CoreV1().Secrets(kyvernoNamespace).Create(ctx, s, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			_, err = cs.CoreV1().Secrets(kyvernoNamespace).Update(ctx, s, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("secret %s/%s: %w", kyvernoNamespace, s.Name, err)
		}
	}
	return nil
}

// kyvernoPodArgs is the lab-pod command line that runs m's Kyverno.
func (l *Lab) kyvernoPodArgs(m config.Member) []string {
	p, member := l.Cfg.Ports, m.Name()
	addr := hostPort(p.KyvernoFor(m))
	restorePort := options.DefaultListen[strings.LastIndex(options.DefaultListen, ":")+1:]
	return []string{
		"--expose=" + addr + "=" + strconv.Itoa(kyvernoPodPort),
		"--reach=" + strconv.Itoa(kubernetesServicePort) + "=" + hostPort(p.Member(m).APIServer),
		"--reach=" + restorePort + "=" + hostPort(p.RestoreWebhookFor(m)),
		"--kubeconfig=" + l.Cfg.MembersKubeconfig(), "--context=" + member,
		"--service-account=" + kyvernoNamespace + "/" + kyvernoServiceAccount,
		// Inside the lab's folder: what a killed pod leaves is emptied at its next start.
		"--dir=" + filepath.Join(l.Cfg.Dir, "pods", kyvernoName(member)),
		// Within stopKyverno's wait.
		"--grace=15s",
		"--",
		l.Cfg.Bins.Kyverno,
		"--serverIP=" + addr,
		"--webhookServerPort=" + strconv.Itoa(kyvernoPodPort),
		"--caSecretName=" + kyvernoCASecret,
		"--tlsSecretName=" + kyvernoTLSSecret,
		"--admissionReports=false",
		// No metrics listener (-disableMetrics alone keeps one on :8000).
		"--disableMetrics", "--otelConfig=grpc",
		"--controllerRuntimeMetricsAddress=0",
		"--loggingFormat=json",
	}
}

// startKyverno starts member's Kyverno and waits until it answers.
func (l *Lab) startKyverno(ctx context.Context, member string) error {
	m, err := l.Cfg.Member(member)
	if err != nil {
		return err
	}
	probe, err := l.kyvernoProbe(member)
	if err != nil {
		return err
	}
	name := kyvernoName(member)
	if _, running := l.Proc.Running(name); running {
		return l.Proc.WaitReady(ctx, name, probe)
	}
	if _, err := l.Proc.Start(proc.Spec{Name: name, Path: l.Cfg.Bins.Pod, Args: l.kyvernoPodArgs(m), Env: []string{
		"KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=" + strconv.Itoa(kubernetesServicePort),
		"KYVERNO_NAMESPACE=" + kyvernoNamespace, "KYVERNO_POD_NAME=" + name,
		"KYVERNO_SERVICEACCOUNT_NAME=" + kyvernoServiceAccount, "KYVERNO_DEPLOYMENT=kyverno-admission-controller",
		// Kyverno refuses to start without these; neither ConfigMap has to exist
		// (without its configuration Kyverno filters no resources out).
		"INIT_CONFIG=kyverno", "METRICS_CONFIG=kyverno-metrics",
	}}); err != nil {
		return err
	}
	return l.Proc.WaitReady(ctx, name, probe)
}

// stopKyverno stops member's Kyverno (its pod ends with it).
func (l *Lab) stopKyverno(member string) error {
	return l.Proc.Stop(kyvernoName(member), graceOf(kyvernoComponent))
}

// applyKyvernoPolicy applies the restore ClusterPolicy to member, pointed at
// the restore webhook through the pod and trusting the lab's CA, and waits
// until Kyverno reports it ready (its webhook configured for it).
func (l *Lab) applyKyvernoPolicy(ctx context.Context, member string) error {
	ca, err := os.ReadFile(l.caFile())
	if err != nil {
		return err
	}
	out := filepath.Join(l.Cfg.ManifestDir(), "kyverno-clusterpolicy-"+member+".yaml")
	if err := manifest.RenderFile(filepath.Join(l.Cfg.Root, "restore", "deploy", "kyverno-clusterpolicy.yaml"), out, 0o644,
		kyvernoPolicyURL, "https://"+options.DefaultListen+"/locate",
		"{{caBundle-PEM}}", manifest.IndentPEM(string(ca), "                ")); err != nil {
		return err
	}
	// Kyverno's own webhook validates the policy; it may take a moment to be registered.
	if err := poll.Until(ctx, 2*time.Minute, 2*time.Second, "Kyverno to accept its policy in "+member, func(ctx context.Context) (bool, error) {
		err := l.kubectlMember(ctx, member, "apply", "--server-side", "-f", out)
		return err == nil, err
	}); err != nil {
		return err
	}
	return l.kubectlMember(ctx, member, "wait", "--for=condition=Ready", "clusterpolicy/"+lab.KyvernoPolicy, "--timeout=3m")
}

// setUpKyverno installs, starts and configures member's Kyverno.
func (l *Lab) setUpKyverno(ctx context.Context, member string) error {
	if err := l.installKyverno(ctx, member); err != nil {
		return err
	}
	if err := l.startKyverno(ctx, member); err != nil {
		return err
	}
	return l.applyKyvernoPolicy(ctx, member)
}

// waitKyvernoAdmission waits until member's Kyverno acts on admission (lab.WaitKyvernoAdmission).
func (l *Lab) waitKyvernoAdmission(ctx context.Context, member string) error {
	rc, err := clientcmd.BuildConfigFromFlags("", l.memberKubeconfig(member))
	if err != nil {
		return err
	}
	return lab.WaitKyvernoAdmission(ctx, rc, member)
}

// tearDownKyverno removes member's Kyverno: its policy first (while Kyverno
// runs, so that it takes its webhook rules back), then the process, then the
// webhook configurations it registered, so that nothing calls a Kyverno that
// is gone. Its CRDs, namespace and Secrets stay.
func (l *Lab) tearDownKyverno(ctx context.Context, member string) error {
	cs, err := l.memberClient(member)
	if err != nil {
		return err
	}
	if _, err := cs.Discovery().ServerResourcesForGroupVersion("kyverno.io/v1"); err == nil {
		if err := l.kubectlMember(ctx, member, "delete", "clusterpolicy", lab.KyvernoPolicy, "--ignore-not-found", "--wait=true", "--timeout=1m"); err != nil {
			return err
		}
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("%s: Kyverno's API: %w", member, err)
	}
	if err := l.stopKyverno(member); err != nil {
		return err
	}
	if err := l.kubectlMember(ctx, member, "delete", "mutatingwebhookconfigurations,validatingwebhookconfigurations",
		"-l", "webhook.kyverno.io/managed-by=kyverno", "--ignore-not-found"); err != nil {
		return err
	}
	// Its leader election and health leases: a Kyverno started later starts afresh.
	return l.kubectlMember(ctx, member, "-n", kyvernoNamespace, "delete", "lease", "kyverno", "kyverno-health", "--ignore-not-found")
}

// Restore is the members' restore mode (lab.RestoreModes).
func (l *Lab) Restore() string {
	if m := l.restoreMode(); m != "" {
		return m
	}
	return config.RestoreWebhook
}

// SetRestore switches every member's restore path (lab.RestoreModes), and is
// idempotent: a switch that failed half-way is finished, or undone, by
// calling it again with either mode. The paths overlap instead of leaving a
// gap in which a failed-over FlinkDeployment would be admitted without a
// decision (both decide alike, from /locate and /mutate): to kyverno, Kyverno
// and its policy come (ready) before the restore webhook's registration goes;
// to webhook, the registration comes back before Kyverno goes
// (tearDownKyverno). The restore webhook keeps running either way: the policy
// calls its /locate. Every member must be running.
func (l *Lab) SetRestore(ctx context.Context, mode string) error {
	if err := config.CheckRestore(mode); err != nil {
		return err
	}
	st, err := l.State()
	if err != nil {
		return err
	}
	if !st.FlinkRunner {
		return fmt.Errorf("this lab runs no Flink (missing %s): there is nothing to restore", l.FlinkDisabledReason())
	}
	if mode == config.RestoreKyverno {
		if err := l.kyvernoReady(); err != nil {
			return err
		}
		// A lab brought up before Kyverno's pair existed gets it now (existing pairs stay).
		if err := pki.Generate(l.Cfg.PKIDir(), config.Host); err != nil {
			return err
		}
	}
	for _, m := range st.Members {
		if _, ok := l.Proc.Running(restoreWebhookName(m)); !ok {
			return fmt.Errorf("%s is not running (its restore webhook is down): start it first", m)
		}
	}
	for _, m := range st.Members {
		if mode == config.RestoreKyverno {
			if err := l.setUpKyverno(ctx, m); err != nil {
				return fmt.Errorf("%s: %w (the restore webhook still restores there; run the switch again, either way)", m, err)
			}
			if err := l.kubectlMember(ctx, m, "delete", "mutatingwebhookconfiguration", lab.RestoreWebhookConfiguration, "--ignore-not-found"); err != nil {
				return err
			}
			// Only now is Kyverno's the only restore on admission: the webhook's
			// own refusal no longer comes first.
			if err := l.waitKyvernoAdmission(ctx, m); err != nil {
				return fmt.Errorf("%s: %w", m, err)
			}
			continue
		}
		if err := l.kubectlMember(ctx, m, "apply", "--server-side", "-f", filepath.Join(l.Cfg.ManifestDir(), "flink-restore-webhook-"+m+".yaml")); err != nil {
			return err
		}
		if err := l.tearDownKyverno(ctx, m); err != nil {
			return fmt.Errorf("%s: %w (the restore webhook restores there again; run the switch again to remove Kyverno)", m, err)
		}
	}
	st.Restore, st.Components = mode, l.components(mode)
	return l.writeState(st)
}
