//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
)

// DividedFailoverSpecInput is the input of DividedFailoverSpec.
type DividedFailoverSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
}

// DividedFailoverSpec: a Deployment divided over two of three members; one of
// the two fails. A user observes: the failed cluster's replicas move to the
// third member, which alone carries the marker; the member that kept its
// replicas is not marked.
func DividedFailoverSpec(ctx context.Context, inputGetter func() DividedFailoverSpecInput) {
	var (
		input DividedFailoverSpecInput
		e     *specEnv
	)
	const name = "divided"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		Expect(len(input.Lab.MemberNames())).To(BeNumerically(">=", 3), "divided spec needs three members")
		e = newSpecEnv(ctx, "divided", input.E2EConfig, input.Lab, input.ArtifactFolder)
		e.timeline = framework.NewTimeline("Divided workload, one cluster fails (" + e.ns + ")")
	})

	It("marks only the cluster that received the failed cluster's replicas", func(ctx SpecContext) {
		e.deployWithPolicy(ctx, name, 4, framework.PolicyInput{
			Clusters: input.Lab.MemberNames()[:3], Divided: true, TolerationSeconds: 10, ClusterFailover: true,
			StateRules: map[string]string{stateLabel: "{.replicas}"},
		})
		placed := e.waitPlaced(ctx, name)
		Expect(placed).To(HaveLen(2))
		failed, kept := placed[0], placed[1]
		e.timeline.Mark("failure injected on " + failed)
		e.taint(ctx, failed, "lab.karmada.io/fault")
		after := e.waitMovedAway(ctx, name, failed)
		Expect(after).To(ContainElement(kept), "the healthy cluster keeps its replicas")
		var added string
		for _, c := range after {
			if c != kept {
				added = c
			}
		}
		Expect(added).NotTo(BeEmpty(), "the failed cluster's replicas went to a third cluster")

		e.eventually(ctx, "wait-scheduled", func(g Gomega, ctx context.Context) {
			h := e.history(ctx, name)
			g.Expect(h).To(HaveLen(1))
			g.Expect(h[0].ClustersBeforeFailover).To(ConsistOf(failed, kept))
			g.Expect(h[0].ClustersAfterFailover).To(ConsistOf(added, kept))
		}).Should(Succeed())
		labels, annotations := e.memberMeta(ctx, added, name)
		Expect(labels).To(HaveKeyWithValue(framework.FailoverReasonLabel, "ClusterFailure"))
		Expect(annotations[framework.FailoverFromAnnotation]).To(ContainSubstring(failed))
		labels, _ = e.memberMeta(ctx, kept, name)
		Expect(labels).NotTo(HaveKey(framework.FailoverReasonLabel), "%s kept its replicas: not a failover destination", kept)
	})

	It("records two clusters failing at once as two failovers, each once, and marks the cluster that received their replicas", func(ctx SpecContext) {
		e.deployWithPolicy(ctx, name, 4, framework.PolicyInput{
			Clusters: input.Lab.MemberNames()[:3], Divided: true, DividedMinGroups: 1, TolerationSeconds: 10, ClusterFailover: true,
			StateRules: map[string]string{stateLabel: "{.replicas}"},
		})
		placed := e.waitPlaced(ctx, name)
		Expect(placed).To(HaveLen(2))
		e.timeline.Mark("failure injected on " + placed[0] + " and " + placed[1])
		e.taint(ctx, placed[0], "lab.karmada.io/fault")
		e.taint(ctx, placed[1], "lab.karmada.io/fault")
		e.waitMovedAway(ctx, name, placed[0])
		after := e.waitMovedAway(ctx, name, placed[1])
		Expect(after).To(HaveLen(1))
		dest := after[0]

		var history []workv1alpha2.FailoverHistoryItem
		e.eventually(ctx, "wait-scheduled", func(g Gomega, ctx context.Context) {
			history = e.history(ctx, name)
			g.Expect(history).To(HaveLen(2), "one item per cluster moved away from")
			var from []string
			for _, item := range history {
				g.Expect(item.Evictions).To(HaveLen(1))
				from = append(from, item.Evictions[0].FromCluster)
				g.Expect(item.ClustersAfterFailover).NotTo(BeEmpty(), "the placement after each failover is known")
			}
			g.Expect(from).To(ConsistOf(placed[0], placed[1]))
			g.Expect(history[len(history)-1].ClustersAfterFailover).To(Equal([]string{dest}))
		}).Should(Succeed())
		sameSecond := history[0].Evictions[0].CreationTimestamp.Unix() == history[1].Evictions[0].CreationTimestamp.Unix()
		GinkgoWriter.Printf("tasks stamped %s and %s (same second: %t)\n", history[0].Evictions[0].CreationTimestamp.UTC().Format("15:04:05"),
			history[1].Evictions[0].CreationTimestamp.UTC().Format("15:04:05"), sameSecond)

		labels, annotations := e.memberMeta(ctx, dest, name)
		Expect(labels).To(HaveKeyWithValue(framework.FailoverReasonLabel, "ClusterFailure"), "%s received the replicas of both", dest)
		Expect(annotations[framework.FailoverFromAnnotation]).To(Or(ContainSubstring(placed[0]), ContainSubstring(placed[1])))
		// Recorded once: later passes of the controller add nothing.
		e.consistently(ctx, func(g Gomega, ctx context.Context) {
			g.Expect(e.history(ctx, name)).To(HaveLen(2))
		}).Should(Succeed())
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
