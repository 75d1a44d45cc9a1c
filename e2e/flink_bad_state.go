//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/karmada-failover/lab/apis/flink"
	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
	labapi "github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
)

// BadCarriedStateSpecInput is the input of BadCarriedStateSpec.
type BadCarriedStateSpecInput = ForgedMarkerSpecInput

// BadCarriedStateSpec: state that Karmada's own identity carries to a member
// but that cannot be used safely is refused, whichever path restores (the
// restore webhook, or Kyverno asking its /locate). The spec creates the
// FlinkDeployments in the member as Karmada does, impersonating the identity
// karmadactl join created for it (the one the restore path trusts), with a
// fresh failover marker and the job id listed as preserved. A user observes:
//   - a job id that is not 32 hex characters: the create is refused, naming the
//     label, and nothing is created;
//   - a checkpoint directory outside the namespace's prefix
//     (s3://flink-checkpoints/<namespace>/): refused, naming the prefix, so a
//     namespace never restores another namespace's job;
//   - the checkpoint store unreachable (the lab stops it): refused, the
//     documented failure policy (Karmada retries; nothing starts without state).
func BadCarriedStateSpec(ctx context.Context, inputGetter func() BadCarriedStateSpecInput) {
	var (
		input BadCarriedStateSpecInput
		e     *specEnv
	)

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		skipWithoutFlinkRunner(input.Lab)
		e = newSpecEnv(ctx, "bad-state", input.E2EConfig, input.Lab, input.ArtifactFolder)
	})

	It("refuses an invalid job id and a checkpoint directory outside the namespace's prefix", func(ctx SpecContext) {
		m := input.Lab.Member(input.Cluster)
		inMember := e.flinkInMember(ctx, m)
		// Karmada's identity in this member (Push mode: karmadactl join's ServiceAccount).
		rc := m.RESTConfig()
		rc.Impersonate.UserName = "system:serviceaccount:karmada-cluster:karmada-" + input.Cluster
		dyn, err := dynamic.NewForConfig(rc)
		Expect(err).NotTo(HaveOccurred())
		fds := dyn.Resource(flink.GVR).Namespace(e.ns)
		carried := func(name, checkpointDir, jobID string) *unstructured.Unstructured {
			fd := framework.NewFlinkDeployment(e.ns, name, checkpointDir)
			fd.SetLabels(map[string]string{workv1alpha2.FailoverReasonLabel: "ClusterFailure", jobIDLabel: jobID})
			fd.SetAnnotations(map[string]string{
				workv1alpha2.FailoverTimeAnnotation:          time.Now().UTC().Format(time.RFC3339),
				workv1alpha2.FailoverFromAnnotation:          "member-gone",
				workv1alpha2.FailoverPreservedKeysAnnotation: jobIDLabel,
			})
			return fd
		}
		refused := func(fd *unstructured.Unstructured, want string) {
			GinkgoHelper()
			_, err := fds.Create(ctx, fd, metav1.CreateOptions{})
			if err == nil {
				e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = inMember.Delete(ctx, fd.GetName(), metav1.DeleteOptions{}) })
			}
			Expect(err).To(HaveOccurred(), "the create of %s was admitted", fd.GetName())
			fmt.Fprintf(GinkgoWriter, "%s (%s): %v\n", fd.GetName(), restoreMode(input.Lab), err)
			Expect(err.Error()).To(ContainSubstring(want))
			if restoreMode(input.Lab) == config.RestoreKyverno {
				Expect(err.Error()).To(ContainSubstring("flink-restore-from-latest-checkpoint"), "Kyverno's policy refused it")
			}
			_, err = inMember.Get(ctx, fd.GetName(), metav1.GetOptions{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "nothing was created: %v", err)
		}

		By("a job id that is not 32 hex characters")
		refused(carried("bad-job-id", "s3://flink-checkpoints/"+e.ns+"/bad-job-id", "not-a-flink-job-id"), jobIDLabel)

		By("a checkpoint directory in another namespace's prefix")
		refused(carried("other-prefix", "s3://flink-checkpoints/another-namespace/job", "0123456789abcdef0123456789abcdef"),
			"s3://flink-checkpoints/"+e.ns+"/")

		if err := labapi.Supports(input.Lab.Provider, labapi.FaultStopCheckpointStore); err != nil {
			fmt.Fprintf(GinkgoWriter, "not checked: the checkpoint store unreachable (%v)\n", err)
			return
		}
		By("the checkpoint store unreachable: refused (failurePolicy Fail; Karmada retries the create)")
		Expect(labapi.Inject(ctx, input.Lab.Provider, labapi.FaultStopCheckpointStore, "")).To(Succeed())
		e.cleanups = append(e.cleanups, func(ctx context.Context) {
			_ = labapi.Heal(ctx, input.Lab.Provider, labapi.FaultStopCheckpointStore, "", labapi.StartOptions{})
		})
		refused(carried("store-down", "s3://flink-checkpoints/"+e.ns+"/store-down", "0123456789abcdef0123456789abcdef"),
			"checkpoint lookup for")
		Expect(labapi.Heal(ctx, input.Lab.Provider, labapi.FaultStopCheckpointStore, "", labapi.StartOptions{})).To(Succeed())
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
