//go:build e2e

package e2e

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
	labapi "github.com/karmada-failover/lab/lab"
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
		e.timeline = framework.NewTimeline("Divided workload, its clusters fail (" + e.ns + ")")
	})

	It("marks only the cluster that received the failed cluster's replicas", func(ctx SpecContext) {
		e.waitRoom(ctx, input.Lab.MemberNames()[:3], 4)
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

		framework.WaitForFailoverHistory(ctx, framework.WaitForFailoverHistoryInput{
			Karmada: input.Lab.Karmada, Namespace: e.ns, Name: name, Kind: "Deployment",
			Items: []framework.FailoverItem{{Before: []string{failed, kept}, After: []string{added, kept}}},
		}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)
		labels, annotations := e.memberMeta(ctx, added, name)
		Expect(labels).To(HaveKeyWithValue(workv1alpha2.FailoverReasonLabel, "ClusterFailure"))
		Expect(annotations[workv1alpha2.FailoverFromAnnotation]).To(ContainSubstring(failed))
		labels, _ = e.memberMeta(ctx, kept, name)
		Expect(labels).NotTo(HaveKey(workv1alpha2.FailoverReasonLabel), "%s kept its replicas: not a failover destination", kept)
	})

	It("records two clusters failing at once as two failovers, each once, and marks the cluster that received their replicas", func(ctx SpecContext) {
		e.waitRoom(ctx, input.Lab.MemberNames()[:3], 4)
		e.deployWithPolicy(ctx, name, 4, framework.PolicyInput{
			Clusters: input.Lab.MemberNames()[:3], Divided: true, DividedMinGroups: 1, TolerationSeconds: 10, ClusterFailover: true,
			StateRules: map[string]string{stateLabel: "{.replicas}"},
		})
		placed := e.waitPlaced(ctx, name)
		Expect(placed).To(HaveLen(2))
		// Karmada may evict a cluster twice here: the scheduler's result for the first eviction,
		// computed while the second cluster was not yet tainted, can put that cluster back after
		// the taint manager took it out, and the taint manager then evicts it again (upstream's
		// scheduler and taint manager race; seen on the lab). Each eviction is a failover of its
		// own, recorded once: the spec counts the eviction tasks the binding had, as the API
		// server showed them to a watch started before the fault.
		tasks := watchEvictionTasks(ctx, e, framework.BindingName(name, "Deployment"))
		e.timeline.Mark("failure injected on " + placed[0] + " and " + placed[1])
		e.taint(ctx, placed[0], "lab.karmada.io/fault")
		e.taint(ctx, placed[1], "lab.karmada.io/fault")
		e.waitMovedAway(ctx, name, placed[0])
		after := e.waitMovedAway(ctx, name, placed[1])
		Expect(after).To(HaveLen(1))
		dest := after[0]

		history := framework.WaitForFailoverHistory(ctx, framework.WaitForFailoverHistoryInput{
			Karmada: input.Lab.Karmada, Namespace: e.ns, Name: name, Kind: "Deployment", Reason: "ClusterFailure",
			Check: func(g Gomega, history []workv1alpha2.FailoverHistoryItem) {
				seen := tasks.seen()
				g.Expect(seen).To(HaveLen(len(history)), "one item per eviction task the binding had: tasks %v", seen)
				var from []string
				for _, item := range history {
					g.Expect(item.ClustersAfterFailover).NotTo(BeEmpty(), "the placement after each failover is known")
					g.Expect(seen).To(ContainElement(evictionTask{item.FromCluster, item.StartTime.Unix()}), "the item records a task the binding had")
					from = append(from, item.FromCluster)
				}
				g.Expect(from).To(ContainElements(placed[0], placed[1]), "both failed clusters recorded")
				g.Expect(placed).To(ContainElements(from), "only the failed clusters recorded")
			},
		}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)
		if len(history) > 2 {
			GinkgoWriter.Printf("Karmada evicted a cluster twice (%d eviction tasks), each recorded once\n", len(history))
		}
		Expect(history[len(history)-1].ClustersAfterFailover).To(Equal([]string{dest}))
		sameSecond := history[0].StartTime.Unix() == history[1].StartTime.Unix()
		GinkgoWriter.Printf("tasks stamped %s and %s (same second: %t)\n", history[0].StartTime.UTC().Format("15:04:05"),
			history[1].StartTime.UTC().Format("15:04:05"), sameSecond)

		labels, annotations := e.memberMeta(ctx, dest, name)
		Expect(labels).To(HaveKeyWithValue(workv1alpha2.FailoverReasonLabel, "ClusterFailure"), "%s received the replicas of both", dest)
		Expect(annotations[workv1alpha2.FailoverFromAnnotation]).To(Or(ContainSubstring(placed[0]), ContainSubstring(placed[1])))
		// Recorded once: later passes of the controller add nothing.
		e.consistently(ctx, func(g Gomega, ctx context.Context) {
			g.Expect(e.history(ctx, name)).To(HaveLen(len(history)))
		}).Should(Succeed())
	})

	It("records two clusters failing in the same second as two failovers, each once, and marks the cluster that received their replicas", func(ctx SpecContext) {
		skipUnsupported(input.Lab, labapi.FaultFailPods)
		e.waitRoom(ctx, input.Lab.MemberNames()[:3], 4)
		e.deployWithPolicy(ctx, name, 4, framework.PolicyInput{
			Clusters: input.Lab.MemberNames()[:3], Divided: true, DividedMinGroups: 1, TolerationSeconds: 20, ApplicationFailover: true,
			StateRules: map[string]string{stateLabel: "{.replicas}"},
		})
		placed := e.waitPlaced(ctx, name)
		Expect(placed).To(HaveLen(2))
		for _, c := range placed {
			Expect(failPods(ctx, input.Lab, c, e.ns, "app="+name, false)).To(Succeed())
		}
		e.timeline.Mark("pods failing on " + placed[0] + " and " + placed[1])
		By("seeing Karmada report the Deployment Unhealthy on both clusters")
		framework.WaitForWorkloadUnhealthy(ctx, framework.WaitForWorkloadUnhealthyInput{
			Karmada: input.Lab.Karmada, Namespace: e.ns, Name: name, Kind: "Deployment", Clusters: 2,
		}, e.cfg.GetIntervals(e.name, "wait-failover")...)
		// Application failover keeps the time a cluster turned unhealthy in memory. Killing
		// karmada-controller-manager while both clusters are unhealthy makes the restarted
		// controller see both in its first pass, so their tolerations end together and it evicts
		// both in one pass: two eviction tasks with the same creation time.
		Expect(labapi.Inject(ctx, input.Lab.Provider, labapi.FaultKillController, "")).To(Succeed())
		e.cleanups = append(e.cleanups, func(ctx context.Context) {
			_ = labapi.Heal(ctx, input.Lab.Provider, labapi.FaultKillController, "", labapi.StartOptions{})
		})
		Expect(labapi.Heal(ctx, input.Lab.Provider, labapi.FaultKillController, "", labapi.StartOptions{})).To(Succeed())
		e.timeline.Mark("karmada-controller-manager killed (SIGKILL) and started again")

		e.waitMovedAway(ctx, name, placed[0])
		after := e.waitMovedAway(ctx, name, placed[1])
		Expect(after).To(HaveLen(1))
		dest := after[0]
		e.timeline.Mark("moved to " + dest)

		// One item per cluster moved away from, each with the placement after the failovers.
		both := framework.FailoverItem{Before: []string{placed[0], placed[1]}, After: []string{dest}}
		history := framework.WaitForFailoverHistory(ctx, framework.WaitForFailoverHistoryInput{
			Karmada: input.Lab.Karmada, Namespace: e.ns, Name: name, Kind: "Deployment", Reason: "ApplicationFailure",
			Items: []framework.FailoverItem{both, both}, EvictedFrom: placed,
		}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)
		Expect(history[0].StartTime.Unix()).To(Equal(history[1].StartTime.Unix()),
			"both clusters evicted in one pass, in the same second")

		labels, annotations := e.memberMeta(ctx, dest, name)
		Expect(labels).To(HaveKeyWithValue(workv1alpha2.FailoverReasonLabel, "ApplicationFailure"), "%s received the replicas of both", dest)
		Expect(annotations).To(HaveKeyWithValue(workv1alpha2.FailoverTimeAnnotation, history[0].StartTime.UTC().Format(time.RFC3339)))
		Expect(strings.Split(annotations[workv1alpha2.FailoverFromAnnotation], ",")).To(ConsistOf(placed[0], placed[1]))
		// Recorded once: later passes of the controller add nothing.
		e.consistently(ctx, func(g Gomega, ctx context.Context) {
			g.Expect(e.history(ctx, name)).To(HaveLen(2))
		}).Should(Succeed())
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}

// evictionTask is a graceful eviction task of a binding: its cluster and creation time.
type evictionTask struct {
	From string
	// Created is the task's creation time in Unix seconds, as the API serialises it.
	Created int64
}

// evictionTasks are the distinct eviction tasks a binding had, as a watch saw them.
type evictionTasks struct {
	mu    sync.Mutex
	tasks []evictionTask
}

func (t *evictionTasks) seen() []evictionTask {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.tasks)
}

// watchEvictionTasks watches ResourceBinding binding of the spec's namespace, from now until
// the spec ends, and collects every graceful eviction task it ever carried.
func watchEvictionTasks(ctx context.Context, e *specEnv, binding string) *evictionTasks {
	rbs := e.lab.Karmada.Failover().WorkV1alpha2().ResourceBindings(e.ns)
	w, err := rbs.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + binding})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	t := &evictionTasks{}
	go func() {
		defer GinkgoRecover()
		for ev := range w.ResultChan() {
			rb, ok := ev.Object.(*workv1alpha2.ResourceBinding)
			if !ok {
				continue
			}
			t.mu.Lock()
			for _, task := range rb.Spec.GracefulEvictionTasks {
				if task.CreationTimestamp == nil {
					continue
				}
				et := evictionTask{task.FromCluster, task.CreationTimestamp.Unix()}
				if !slices.Contains(t.tasks, et) {
					t.tasks = append(t.tasks, et)
				}
			}
			t.mu.Unlock()
		}
	}()
	return t
}
