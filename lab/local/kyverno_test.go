package local

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
)

// TestKyvernoPodArgs: Kyverno's webhook is published on its member's port on
// 127.0.0.1 only, the API server calls it there (-serverIP), and the pod
// reaches exactly its member's API server and restore webhook.
func TestKyvernoPodArgs(t *testing.T) {
	l := testLab(t)
	l.Cfg.Bins.Kyverno = "/opt/kyverno-v1.15.2/kyverno"
	args := l.kyvernoPodArgs(2)
	sep := slices.Index(args, "--")
	if sep < 0 || args[sep+1] != "/opt/kyverno-v1.15.2/kyverno" {
		t.Fatalf("no -- before Kyverno's binary: %q", args)
	}
	pod, kyverno := args[:sep], args[sep+2:]
	for _, want := range []string{
		"--expose=127.0.0.1:24652=9443",
		"--reach=443=127.0.0.1:25020",
		"--reach=24600=127.0.0.1:24602",
		"--service-account=kyverno/kyverno-admission-controller",
		"--context=member2",
	} {
		if !slices.Contains(pod, want) {
			t.Errorf("lab-pod flags %q lack %s", pod, want)
		}
	}
	for _, want := range []string{"--serverIP=127.0.0.1:24652", "--webhookServerPort=9443", "--caSecretName=kyverno-lab-ca",
		"--tlsSecretName=kyverno-lab-tls", "--otelConfig=grpc", "--controllerRuntimeMetricsAddress=0"} {
		if !slices.Contains(kyverno, want) {
			t.Errorf("Kyverno's flags %q lack %s", kyverno, want)
		}
	}
	for _, a := range args {
		if strings.Contains(a, "0.0.0.0") {
			t.Errorf("binds to every interface: %s", a)
		}
	}
}

// TestApplyKyvernoObjects: the objects Kyverno needs, with its serving pair
// in Secrets it does not manage (so it never replaces them), idempotently.
func TestApplyKyvernoObjects(t *testing.T) {
	cs := fake.NewClientset()
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if err := applyKyvernoObjects(ctx, cs, []byte("CA"), []byte("CRT"), []byte("KEY")); err != nil {
			t.Fatalf("apply %d: %v", i+1, err)
		}
	}
	ca, err := cs.CoreV1().Secrets("kyverno").Get(ctx, "kyverno-lab-ca", metav1.GetOptions{})
	if err != nil || string(ca.Data["tls.crt"]) != "CA" || len(ca.Data["tls.key"]) != 0 {
		t.Errorf("CA secret %+v, %v: want tls.crt only", ca, err)
	}
	pair, err := cs.CoreV1().Secrets("kyverno").Get(ctx, "kyverno-lab-tls", metav1.GetOptions{})
	if err != nil || pair.Type != corev1.SecretTypeTLS || string(pair.Data["tls.key"]) != "KEY" {
		t.Errorf("TLS secret %+v, %v", pair, err)
	}
	for _, s := range []*corev1.Secret{ca, pair} {
		if _, managed := s.Labels["cert.kyverno.io/managed-by"]; managed {
			t.Errorf("%s is labelled as Kyverno's: Kyverno would replace it", s.Name)
		}
	}
	crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, "kyverno-lab:admission-controller", metav1.GetOptions{})
	if err != nil || crb.Subjects[0].Name != "kyverno-admission-controller" || crb.Subjects[0].Namespace != "kyverno" {
		t.Errorf("binding %+v, %v", crb, err)
	}
	if _, err := cs.CoreV1().ServiceAccounts("kyverno").Get(ctx, "kyverno-admission-controller", metav1.GetOptions{}); err != nil {
		t.Error(err)
	}
}

// TestSetRestoreRefuses: a bad mode, or a lab without Flink, is refused before anything changes.
func TestSetRestoreRefuses(t *testing.T) {
	l := testLab(t)
	ctx := context.Background()
	if err := l.SetRestore(ctx, "istio"); err == nil || !strings.Contains(err.Error(), "want webhook or kyverno") {
		t.Errorf("bad mode: %v", err)
	}
	if err := l.SetRestore(ctx, config.RestoreKyverno); err == nil {
		t.Error("no lab: no error")
	}
	if err := os.MkdirAll(l.Cfg.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := l.writeState(&lab.State{Ready: true, Members: []string{"member1"}}); err != nil {
		t.Fatal(err)
	}
	if err := l.SetRestore(ctx, config.RestoreKyverno); err == nil || !strings.Contains(err.Error(), "runs no Flink") {
		t.Errorf("a lab without Flink: %v", err)
	}
	if got := l.Restore(); got != config.RestoreWebhook {
		t.Errorf("Restore() = %q, want the default %q", got, config.RestoreWebhook)
	}
	if err := l.writeState(&lab.State{Ready: true, FlinkRunner: true, Members: []string{"member1"}, Restore: config.RestoreKyverno}); err != nil {
		t.Fatal(err)
	}
	if got := l.Restore(); got != config.RestoreKyverno {
		t.Errorf("Restore() = %q, want the recorded %q", got, config.RestoreKyverno)
	}
	l.Cfg.Bins.Kyverno, l.Cfg.Bins.Pod = "", ""
	if err := l.SetRestore(ctx, config.RestoreWebhook); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("members down: %v", err)
	}
	if runtime.GOOS == "linux" {
		if err := l.writeState(&lab.State{Ready: true, FlinkRunner: true, Members: []string{"member1"}}); err != nil {
			t.Fatal(err)
		}
		if err := l.SetRestore(ctx, config.RestoreKyverno); err == nil || !strings.Contains(err.Error(), "make kyverno") {
			t.Errorf("Kyverno not built: %v", err)
		}
	}
}
