//go:build e2e

package e2e

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
)

// BadInputSpecInput is the input of BadInputSpec.
type BadInputSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	Candidates     []string
}

// Rules of the bad-input scenario.
const (
	// missingStateLabel's JSONPath names a field the status does not have.
	missingStateLabel = "failover.lab.karmada.io/missing"
	// longStateLabel's value is 70 characters: not a valid label value, so it is
	// carried as an annotation.
	longStateLabel = "failover.lab.karmada.io/long"
)

// BadInputSpec: a policy whose state rules cannot all be honoured, and a
// resource template that forges the failover marker. A user observes: the
// forged keys never reach a member; the failover is not blocked by the rule
// that extracts nothing (a Warning event on the binding says why); the value
// that is not a valid label value arrives as an annotation.
func BadInputSpec(ctx context.Context, inputGetter func() BadInputSpecInput) {
	var (
		input BadInputSpecInput
		e     *specEnv
	)
	const name = "bad"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		e = newSpecEnv(ctx, "bad-input", input.E2EConfig, input.Lab, input.ArtifactFolder)
	})

	It("drops forged marker keys, does not block eviction on a missing field, and annotates long values", func(ctx SpecContext) {
		k := input.Lab.Karmada
		d := framework.NewDeployment(e.ns, name, 1)
		d.Labels = map[string]string{workv1alpha2.FailoverReasonLabel: "ClusterFailure"}
		d.Annotations = map[string]string{workv1alpha2.FailoverFromAnnotation: "some-other-cluster"}
		_, err := k.Kube().AppsV1().Deployments(e.ns).Create(ctx, d, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = k.Karmada().PolicyV1alpha1().PropagationPolicies(e.ns).Create(ctx, framework.NewPropagationPolicy(framework.PolicyInput{
			Namespace: e.ns, Name: name, Target: name, Clusters: input.Candidates, TolerationSeconds: 10, ClusterFailover: true,
			StateRules: map[string]string{
				missingStateLabel: "{.noSuchField}",
				longStateLabel:    strings.Repeat("{.replicas}", 70),
			},
		}), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		source := e.waitPlaced(ctx, name)[0]
		labels, annotations := e.memberMeta(ctx, source, name)
		Expect(labels).NotTo(HaveKey(workv1alpha2.FailoverReasonLabel), "a marker forged by the template reached %s", source)
		Expect(annotations).NotTo(HaveKey(workv1alpha2.FailoverFromAnnotation), "a marker forged by the template reached %s", source)

		others := clustersExcept(input.Candidates, source)
		versions := e.watchDeploymentLabels(ctx, others, name)
		e.taint(ctx, source, "lab.karmada.io/fault")
		dest := e.waitMovedAway(ctx, name, source)[0]

		By("a Warning event on the binding names the rule that extracted nothing")
		framework.WaitForEvent(ctx, framework.WaitForEventInput{
			Getter: k, Namespace: e.ns, InvolvedKind: "ResourceBinding",
			Type: corev1.EventTypeWarning, Reason: "PreservedStateExtractionFailed", MessageContains: []string{source, missingStateLabel},
		}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)

		By("the failover is recorded and the destination marked; the long value is an annotation")
		framework.WaitForFailoverHistory(ctx, framework.WaitForFailoverHistoryInput{
			Karmada: k, Namespace: e.ns, Name: name, Kind: "Deployment",
			Items: []framework.FailoverItem{{After: []string{dest}}},
		}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)
		labels, annotations = e.memberMeta(ctx, dest, name)
		Expect(labels).To(HaveKeyWithValue(workv1alpha2.FailoverReasonLabel, "ClusterFailure"))
		Expect(annotations).To(HaveKeyWithValue(workv1alpha2.FailoverFromAnnotation, source))
		// The state is there while the failover is in progress: on the Deployment
		// Karmada created on the destination (seen by the watch).
		created := versions.created(dest)
		Expect(created).NotTo(BeNil(), "the watch saw Karmada create the Deployment on %s", dest)
		Expect(created.labels).NotTo(HaveKey(longStateLabel))
		Expect(created.annotations).To(HaveKeyWithValue(longStateLabel, strings.Repeat("1", 70)))
		Expect(created.labels).NotTo(HaveKey(missingStateLabel))
		Expect(labels).NotTo(HaveKey(missingStateLabel))
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
