//go:build e2e

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
)

// ConsecutiveFailoversSpecInput is the input of ConsecutiveFailoversSpec.
type ConsecutiveFailoversSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	// Failovers is how many times the workload is moved; more than HistoryLimit
	// checks that the oldest items are dropped.
	Failovers int
	// HistoryLimit is karmada-controller-manager's --failover-history-limit.
	HistoryLimit int
}

// ConsecutiveFailoversSpec: a Deployment is failed over again and again (the
// cluster it runs on is tainted, the taint of the previous one removed). A user
// observes: one history item per failover, oldest first, each naming the
// cluster it left and the one it went to; the marker on the newest destination
// names the newest failover; past the limit the oldest items are dropped.
func ConsecutiveFailoversSpec(ctx context.Context, inputGetter func() ConsecutiveFailoversSpecInput) {
	var (
		input ConsecutiveFailoversSpecInput
		e     *specEnv
	)
	const name = "chain"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		Expect(input.Failovers).To(BeNumerically(">=", 2), "Invalid argument. consecutive-failovers spec needs 2 or more failovers")
		Expect(input.HistoryLimit).To(BeNumerically(">", 0), "Invalid argument. HistoryLimit must be the controller's limit")
		Expect(len(input.Lab.MemberNames())).To(BeNumerically(">=", 3), "consecutive-failovers spec needs three members")
		e = newSpecEnv(ctx, "consecutive", input.E2EConfig, input.Lab, input.ArtifactFolder)
		e.timeline = framework.NewTimeline(fmt.Sprintf("%d consecutive failovers (%s)", input.Failovers, e.ns))
	})

	It("records every failover in order, keeps the newest within the limit, and marks the newest destination", func(ctx SpecContext) {
		e.deployWithPolicy(ctx, name, 1, framework.PolicyInput{
			Clusters: input.Lab.MemberNames(), TolerationSeconds: 10, ClusterFailover: true,
			StateRules: map[string]string{stateLabel: "{.replicas}"},
		})
		current := e.waitPlaced(ctx, name)[0]
		type move struct{ from, to string }
		var moves []move
		previousTaint := ""
		for i := 1; i <= input.Failovers; i++ {
			key := fmt.Sprintf("lab.karmada.io/fault-%d", i)
			By(fmt.Sprintf("failover %d: tainting %s", i, current))
			e.timeline.Mark(fmt.Sprintf("failover %d: %s tainted", i, current))
			e.taint(ctx, current, key)
			if previousTaint != "" {
				// The cluster left before becomes a candidate again.
				Expect(input.Lab.TaintCluster(ctx, moves[len(moves)-1].from, previousTaint, "", true)).To(Succeed())
			}
			dest := e.waitMovedAway(ctx, name, current)[0]
			moves = append(moves, move{from: current, to: dest})
			previousTaint, current = key, dest

			want := len(moves)
			if want > input.HistoryLimit {
				want = input.HistoryLimit
			}
			var kept []framework.FailoverItem
			for _, m := range moves[len(moves)-want:] {
				kept = append(kept, framework.FailoverItem{Before: []string{m.from}, After: []string{m.to}, State: map[string]string{stateLabel: "1"}})
			}
			framework.WaitForFailoverHistory(ctx, framework.WaitForFailoverHistoryInput{
				Karmada: input.Lab.Karmada, Namespace: e.ns, Name: name, Kind: "Deployment",
				Reason: "ClusterFailure", Items: kept, OldestFirst: true,
			}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)
			labels, annotations := e.memberMeta(ctx, dest, name)
			Expect(labels).To(HaveKeyWithValue(workv1alpha2.FailoverReasonLabel, "ClusterFailure"))
			Expect(annotations).To(HaveKeyWithValue(workv1alpha2.FailoverFromAnnotation, moves[len(moves)-1].from), "the marker names the newest failover")
		}
		AddReportEntry("failovers", len(moves))
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
