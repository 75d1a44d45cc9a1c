package lab

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/karmada-failover/lab/apis/flink"
	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/lab/internal/poll"
)

// The two restore paths of a member, as both labs install them.
const (
	// KyvernoPolicy is the ClusterPolicy of restore/deploy/kyverno-clusterpolicy.yaml.
	KyvernoPolicy = "flink-restore-from-latest-checkpoint"
	// RestoreWebhookConfiguration is the restore webhook's MutatingWebhookConfiguration
	// (restore/deploy/mutatingwebhookconfiguration-{lab,kind}.yaml).
	RestoreWebhookConfiguration = "flink-restore.lab.karmada.io"
)

// WaitKyvernoAdmission waits until the Kyverno of the member rc reaches admits
// FlinkDeployments by the restore policy: a server-side dry run of a create carrying a
// fresh failover marker that no Karmada identity set must be refused by the policy (its
// name in the message). The restore webhook must not be registered then (its own refusal
// would come first). Kyverno's liveness answers before its policy cache and webhook rules
// are in place (after a start or restart); until this passes, a FlinkDeployment could be
// admitted without the policy.
func WaitKyvernoAdmission(ctx context.Context, rc *rest.Config, member string) error {
	rc = rest.CopyConfig(rc)
	rc.Timeout = 15 * time.Second
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	probe := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": flink.GroupVersion.String(), "kind": flink.Kind,
		"metadata": map[string]interface{}{"namespace": metav1.NamespaceDefault, "name": "lab-kyverno-admission-probe",
			"labels": map[string]interface{}{workv1alpha2.FailoverReasonLabel: "ClusterFailure"}},
		"spec": map[string]interface{}{"flinkVersion": "v1_20", "job": map[string]interface{}{
			"jarURI": "local:///opt/flink/usrlib/failover-lab-flink-job.jar", "upgradeMode": "last-state", "state": "running"}},
	}}
	last := ""
	err = poll.Until(ctx, 2*time.Minute, time.Second, "Kyverno's restore policy to act on admission in "+member, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(flink.GVR).Namespace(metav1.NamespaceDefault).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			err = errors.New("a forged marker was admitted")
		}
		if ctx.Err() == nil {
			last = err.Error()
		}
		return strings.Contains(err.Error(), KyvernoPolicy), err
	})
	if err != nil {
		return fmt.Errorf("%w (last answer: %s)", err, last)
	}
	return nil
}
