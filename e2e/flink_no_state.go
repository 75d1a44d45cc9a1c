//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	"github.com/karmada-failover/lab/e2e/framework"
	"github.com/karmada-failover/lab/lab/flinkverify"
)

// FlinkNoStateSpecInput is the input of FlinkNoStateSpec.
type FlinkNoStateSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	Candidates     []string
	// Grace is the restore webhook's --missing-grace in this lab.
	Grace time.Duration
}

// forgedJobID is the job id the resource template carries itself under the
// alias label name: 32 hex characters, so only its origin makes it invalid.
const forgedJobID = "0123456789abcdef0123456789abcdef"

// FlinkNoStateSpec: a FlinkDeployment fails over (application failover) but
// Karmada extracts no state: the StatePreservation rule's JSONPath finds
// nothing in the job's status. The resource template carries a job id label of
// its own under the rule's alias name, which Karmada propagates unchanged. A
// user observes: Karmada warns that it preserved nothing; the restore webhook
// on the destination refuses the FlinkDeployment (naming the template's
// unlisted key), so Karmada keeps retrying, until the failover is older than
// the webhook's grace; then the job starts without state, with the decision
// annotation and a Warning event on the destination, and Flink (REST) reports
// no restore: nothing was taken from the template's job id. The job's committed
// output shows what starting without state costs: the sequence is committed
// again from 0 (the sink verifier's duplicates, as documented).
func FlinkNoStateSpec(ctx context.Context, inputGetter func() FlinkNoStateSpecInput) {
	var (
		input FlinkNoStateSpecInput
		e     *specEnv
	)
	const name = "nostate"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		skipUnsupported(input.Lab, framework.FaultFlinkRunner)
		Expect(input.Grace).To(BeNumerically(">", 0), "Invalid argument. Grace must be the restore webhook's --missing-grace")
		e = newSpecEnv(ctx, "flink-no-state", input.E2EConfig, input.Lab, input.ArtifactFolder)
		e.timeline = framework.NewTimeline(fmt.Sprintf("Flink failover without state (%s)", e.ns))
	})

	It("denies the job until the grace ends, then starts it fresh with a Warning event, never from the template's own job id", func(ctx SpecContext) {
		k := input.Lab.Karmada
		template, _ := e.flinkTemplate(name)
		template.SetLabels(map[string]string{jobIDLabel: forgedJobID})
		// The rule's JSONPath finds nothing: Karmada cannot extract the job id.
		e.createFlink(ctx, template, input.Candidates, &policyv1alpha1.FailoverBehavior{
			Application: &policyv1alpha1.ApplicationFailoverBehavior{
				DecisionConditions: policyv1alpha1.DecisionConditions{TolerationSeconds: ptr.To(flinkUnhealthyToleration)},
				PurgeMode:          policyv1alpha1.PurgeModeDirectly, StatePreservation: jobIDState("{.jobStatus.noSuchField}"),
			},
		})

		By("waiting for the job to run on one member, healthy in Karmada's view")
		var source string
		e.eventually(ctx, "wait-flink-running", func(g Gomega, ctx context.Context) {
			source = e.flinkPlacement(g, ctx, name)
			rb, err := framework.GetBinding(ctx, k, e.ns, framework.BindingName(name, "FlinkDeployment"))
			g.Expect(err).NotTo(HaveOccurred())
			var healthy bool
			for _, s := range rb.Status.AggregatedStatus {
				healthy = healthy || (s.ClusterName == source && s.Health == "Healthy")
			}
			g.Expect(healthy).To(BeTrue(), "FlinkDeployment healthy on %s", source)
		}).Should(Succeed())
		e.timeline.Mark("job RUNNING on " + source)
		By("waiting for the job on " + source + " to commit output (the sink's part files)")
		e.eventually(ctx, "wait-flink-running", func(g Gomega) {
			r, err := input.Lab.VerifyFlinkOutput(e.ns, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(r.Max).To(BeNumerically(">=", 0), "committed output of the job on %s", source)
		}).Should(Succeed())

		By("starving the job on " + source + " (application failover)")
		injected := time.Now()
		Expect(input.Lab.Faults.StarveFlink(ctx, source, true)).To(Succeed())
		e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = input.Lab.Faults.StarveFlink(ctx, source, false) })
		e.timeline.Mark("failure injected on " + source)

		var dest string
		e.eventually(ctx, "wait-flink-failover", func(g Gomega, ctx context.Context) {
			dest = e.flinkPlacement(g, ctx, name)
			g.Expect(dest).NotTo(Equal(source))
		}).Should(Succeed())
		e.timeline.Mark("scheduled to " + dest)

		By("Karmada warns that the rule extracted nothing")
		e.eventually(ctx, "wait-scheduled", func(g Gomega, ctx context.Context) {
			evs, err := k.Kube().CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			var found bool
			for _, ev := range evs.Items {
				found = found || (ev.Reason == "PreservedStateExtractionFailed" && ev.Type == corev1.EventTypeWarning &&
					strings.Contains(ev.Message, jobIDLabel))
			}
			g.Expect(found).To(BeTrue(), "no PreservedStateExtractionFailed Warning naming %s", jobIDLabel)
		}).Should(Succeed())

		By("the restore webhook on " + dest + " refuses the marked FlinkDeployment: the template's job id is not Karmada's")
		var failoverTime time.Time
		e.eventually(ctx, "wait-flink-failover", func(g Gomega, ctx context.Context) {
			rb, err := framework.GetBinding(ctx, k, e.ns, framework.BindingName(name, "FlinkDeployment"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rb.Status.FailoverHistory).NotTo(BeEmpty())
			failoverTime = rb.Status.FailoverHistory[len(rb.Status.FailoverHistory)-1].StartTime.Time
			works, err := k.Karmada().WorkV1alpha1().Works("karmada-es-"+dest).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			var msgs []string
			for _, w := range works.Items {
				for _, c := range w.Status.Conditions {
					if c.Type == "Applied" && c.Status == metav1.ConditionFalse {
						msgs = append(msgs, c.Message)
					}
				}
			}
			g.Expect(strings.Join(msgs, "\n")).To(ContainSubstring("Karmada did not list "+jobIDLabel+" in "+framework.FailoverPreservedKeysAnnotation),
				"the Work's Applied condition on %s carries the webhook's refusal", dest)
		}).Should(Succeed())
		if time.Since(failoverTime) < input.Grace-10*time.Second {
			_, err := input.Lab.Member(dest).Dynamic().Resource(framework.FlinkDeploymentGVR).Namespace(e.ns).Get(ctx, name, metav1.GetOptions{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "within the grace the FlinkDeployment is not on %s (got %v)", dest, err)
		}
		e.timeline.Mark("webhook denies on " + dest)

		By(fmt.Sprintf("after the grace (%s from the failover's time) the job starts without state", input.Grace))
		var fd *unstructured.Unstructured
		e.eventually(ctx, "wait-grace", func(g Gomega, ctx context.Context) {
			var err error
			fd, err = input.Lab.Member(dest).Dynamic().Resource(framework.FlinkDeploymentGVR).Namespace(e.ns).Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(framework.ReadFlinkStatus(fd).State).To(Equal("RUNNING"))
		}).Should(Succeed())
		admitted := time.Now()
		e.timeline.Mark("job RUNNING on " + dest + " without state")
		Expect(admitted.Sub(failoverTime)).To(BeNumerically(">=", input.Grace), "admitted only after the grace")
		Expect(fd.GetLabels()).To(HaveKeyWithValue(jobIDLabel, forgedJobID), "the template's own label reached %s", dest)
		Expect(fd.GetAnnotations()).NotTo(HaveKey(framework.FailoverPreservedKeysAnnotation), "Karmada listed no preserved keys")
		Expect(fd.GetAnnotations()).To(HaveKeyWithValue("restore.lab.karmada.io/decision", "no-job-id"))
		Expect(fd.GetAnnotations()).NotTo(HaveKey("restore.lab.karmada.io/from-job-id"))
		path, _, _ := unstructured.NestedString(fd.Object, "spec", "job", "initialSavepointPath")
		Expect(path).To(BeEmpty(), "nothing restored")

		By("a Warning event on " + dest + " says the job started without its state")
		e.eventually(ctx, "wait-scheduled", func(g Gomega, ctx context.Context) {
			evs, err := input.Lab.Member(dest).Kube().CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			var found []corev1.Event
			for _, ev := range evs.Items {
				if ev.Reason == "FailoverNotRestored" && ev.InvolvedObject.Kind == "FlinkDeployment" && ev.InvolvedObject.Name == name {
					found = append(found, ev)
				}
			}
			g.Expect(found).NotTo(BeEmpty())
			g.Expect(found[0].Type).To(Equal(corev1.EventTypeWarning))
			g.Expect(found[0].Message).To(ContainSubstring("grace period"))
		}).Should(Succeed())

		By("Flink reports that the job restored nothing")
		st := framework.ReadFlinkStatus(fd)
		Expect(st.JobID).NotTo(Equal(forgedJobID))
		e.eventually(ctx, "wait-flink-running", func(g Gomega, ctx context.Context) {
			cp, err := framework.FlinkREST{URL: st.RESTURL, JobID: st.JobID}.Checkpoints(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cp.RestoredFrom).To(BeEmpty())
			g.Expect(cp.Completed).To(BeNumerically(">=", 1), "the fresh job checkpoints")
		}).Should(Succeed())

		By("the committed output shows the fresh start: the sequence committed again from 0")
		var report flinkverify.Report
		e.eventually(ctx, "wait-flink-running", func(g Gomega) {
			var err error
			report, err = input.Lab.VerifyFlinkOutput(e.ns, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(report.Duplicated).To(BeNumerically(">", 0), "%s", report)
		}).Should(Succeed())
		Expect(report.FirstDuplicated).To(BeZero(), "a fresh start commits from sequence 0 again: %s", report)
		e.timeline.Mark("output verified: " + report.String())
		summary := fmt.Sprintf("no state carried: denied on %s, admitted fresh %.0fs after the failover (grace %s), %.0fs after the fault",
			dest, admitted.Sub(failoverTime).Seconds(), input.Grace, admitted.Sub(injected).Seconds())
		AddReportEntry("flink failover without state", summary)
		e.timeline.Title += " — " + summary
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
