//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
)

// Fault is how a failover scenario makes the workload's cluster fail.
type Fault string

const (
	// FaultTaint: an operator taints the cluster NoExecute (cluster failover).
	FaultTaint Fault = "taint"
	// FaultStopCluster: the member's control plane stops (cluster failover
	// through NotReady and the lab's ClusterTaintPolicy).
	FaultStopCluster Fault = "stop-cluster"
	// FaultPodsNotReady: the workload's pods stop being ready in the member
	// (application failover).
	FaultPodsNotReady Fault = "pods-not-ready"
)

// The preserved state rule of the scenarios: the Deployment's replica count as
// reported by the member, carried as a label to the destination.
const stateLabel = "failover.lab.karmada.io/replicas"

// FailoverSpecInput is the input of FailoverSpec.
type FailoverSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	// Fault decides the failover kind.
	Fault Fault
	// Candidates are the clusters the policy may use (the first placement takes one).
	Candidates []string
	// PurgeMode of the failover (default Directly). Karmada deletes the old
	// workload before creating the new one with Directly, which waits for an
	// unreachable cluster to come back; a stopped cluster needs Gracefully.
	PurgeMode policyv1alpha1.PurgeMode
}

// FailoverSpec: a Deployment is placed on one member; the member fails; Karmada
// moves the Deployment to another candidate. A user observes: one
// status.failoverHistory item with the right reason and clusters, the failover
// marker and the preserved state on the destination only, staying there after
// the eviction is over, and the workload Available on the destination.
func FailoverSpec(ctx context.Context, inputGetter func() FailoverSpecInput) {
	var (
		specName = "failover"
		input    FailoverSpecInput
		ns       string
		timeline *framework.Timeline
		cleanups []func(context.Context)
	)
	const name = "web"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		Expect(input.Lab).NotTo(BeNil(), "Invalid argument. input.Lab can't be nil when calling %s spec", specName)
		Expect(input.E2EConfig).NotTo(BeNil(), "Invalid argument. input.E2EConfig can't be nil when calling %s spec", specName)
		Expect(len(input.Candidates)).To(BeNumerically(">=", 2), "Invalid argument. %s spec needs two candidate clusters", specName)
		var err error
		ns, err = framework.CreateNamespace(ctx, input.Lab.Karmada, "failover-"+string(input.Fault))
		Expect(err).NotTo(HaveOccurred())
		timeline = framework.NewTimeline(fmt.Sprintf("Failover by %s (%s)", input.Fault, ns))
		cleanups = nil
	})

	It("records the failover once, marks the destination only, and the workload is Available there", func(ctx SpecContext) {
		k := input.Lab.Karmada
		reason := workv1alpha2.FailoverReason("ClusterFailure")
		if input.Fault == FaultPodsNotReady {
			reason = "ApplicationFailure"
		}

		By("propagating a Deployment to one of " + strings.Join(input.Candidates, ", "))
		_, err := k.Kube().AppsV1().Deployments(ns).Create(ctx, framework.NewDeployment(ns, name, 2), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		pp := framework.NewPropagationPolicy(framework.PolicyInput{
			Namespace: ns, Name: name, Target: name, Clusters: input.Candidates, TolerationSeconds: 10,
			ClusterFailover: input.Fault != FaultPodsNotReady, ApplicationFailover: input.Fault == FaultPodsNotReady,
			StateRules: map[string]string{stateLabel: "{.replicas}"}, PurgeMode: input.PurgeMode,
		})
		_, err = k.Karmada().PolicyV1alpha1().PropagationPolicies(ns).Create(ctx, pp, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		rbName := framework.BindingName(name, "Deployment")
		var source string
		Eventually(func(g Gomega, ctx context.Context) {
			rb, err := framework.GetBinding(ctx, k, ns, rbName)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(framework.BindingHealthy(rb)).To(Succeed())
			g.Expect(rb.Spec.Clusters).To(HaveLen(1))
			source = rb.Spec.Clusters[0].Name
			g.Expect(framework.DeploymentAvailable(ctx, input.Lab.Member(source), ns, name)).To(Succeed())
		}).WithContext(ctx).WithTimeout(interval(input, "wait-available")).WithPolling(poll(input, "wait-available")).Should(Succeed())
		rb, err := framework.GetBinding(ctx, k, ns, rbName)
		Expect(err).NotTo(HaveOccurred())
		Expect(rb.Status.FailoverHistory).To(BeEmpty(), "a first placement is not a failover")
		d, err := input.Lab.Member(source).Kube().AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Labels).NotTo(HaveKey(framework.FailoverReasonLabel), "no marker on the first placement")

		By(fmt.Sprintf("making %s fail by %s", source, input.Fault))
		timeline.Mark("failure injected on " + source)
		switch input.Fault {
		case FaultTaint:
			Expect(input.Lab.TaintCluster(ctx, source, "lab.karmada.io/fault", "e2e", false)).To(Succeed())
			cleanups = append(cleanups, func(ctx context.Context) {
				_ = input.Lab.TaintCluster(ctx, source, "lab.karmada.io/fault", "", true)
			})
		case FaultStopCluster:
			Expect(input.Lab.Faults.StopCluster(ctx, source)).To(Succeed())
			cleanups = append(cleanups, func(ctx context.Context) {
				_ = input.Lab.Faults.StartCluster(ctx, source)
			})
		case FaultPodsNotReady:
			Expect(input.Lab.Faults.FailPods(ctx, source, ns, "app="+name, false)).To(Succeed())
		}

		By("waiting for Karmada to move the Deployment away from " + source)
		var dest string
		Eventually(func(g Gomega, ctx context.Context) {
			if input.Fault == FaultStopCluster {
				if ready, err := input.Lab.ClusterReady(ctx, source); err == nil && !ready {
					timeline.Mark(source + " NotReady")
				}
			}
			rb, err := framework.GetBinding(ctx, k, ns, rbName)
			g.Expect(err).NotTo(HaveOccurred())
			for _, s := range rb.Status.AggregatedStatus {
				if s.ClusterName == source && s.Health == workv1alpha2.ResourceUnhealthy {
					timeline.Mark("workload Unhealthy on " + source)
				}
			}
			for _, t := range rb.Spec.GracefulEvictionTasks {
				if t.FromCluster == source {
					timeline.Mark("evicted from " + source)
				}
			}
			clusters := framework.ScheduledClusters(rb)
			g.Expect(clusters).To(HaveLen(1))
			g.Expect(clusters[0]).NotTo(Equal(source))
			dest = clusters[0]
			timeline.Mark("scheduled to " + dest)
			_, err = input.Lab.Member(dest).Kube().AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			timeline.Mark("applied on " + dest)
			g.Expect(framework.DeploymentAvailable(ctx, input.Lab.Member(dest), ns, name)).To(Succeed())
			timeline.Mark("Available on " + dest)
		}).WithContext(ctx).WithTimeout(interval(input, "wait-failover")).WithPolling(poll(input, "wait-failover")).Should(Succeed())

		By("checking status.failoverHistory")
		Eventually(func(g Gomega, ctx context.Context) {
			rb, err := framework.GetBinding(ctx, k, ns, rbName)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rb.Status.FailoverHistory).To(HaveLen(1))
			item := rb.Status.FailoverHistory[0]
			g.Expect(item.Reason).To(Equal(reason))
			g.Expect(item.ClustersBeforeFailover).To(Equal([]string{source}))
			g.Expect(item.ClustersAfterFailover).To(Equal([]string{dest}))
			g.Expect(item.StartTime.IsZero()).To(BeFalse())
			g.Expect(item.PreservedLabelState).To(HaveKeyWithValue(stateLabel, "2"))
		}).WithContext(ctx).WithTimeout(interval(input, "wait-scheduled")).WithPolling(poll(input, "wait-scheduled")).Should(Succeed())

		By("checking the marker and the preserved state on " + dest + " only")
		d, err = input.Lab.Member(dest).Kube().AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Labels).To(HaveKeyWithValue(framework.FailoverReasonLabel, string(reason)))
		Expect(d.Labels).To(HaveKeyWithValue(stateLabel, "2"))
		Expect(d.Annotations).To(HaveKeyWithValue(framework.FailoverFromAnnotation, source))
		Expect(d.Annotations).To(HaveKey(framework.FailoverTimeAnnotation))
		for _, m := range input.Lab.MemberNames() {
			if m == dest || (m == source && input.Fault == FaultStopCluster) {
				continue
			}
			other, err := input.Lab.Member(m).Kube().AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue
			}
			Expect(err).NotTo(HaveOccurred())
			Expect(other.Labels).NotTo(HaveKey(framework.FailoverReasonLabel), "marker on %s, which is not the destination", m)
		}

		By("checking the marker outlives the eviction task")
		Eventually(func(g Gomega, ctx context.Context) {
			rb, err := framework.GetBinding(ctx, k, ns, rbName)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rb.Spec.GracefulEvictionTasks).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(interval(input, "wait-cleanup")).WithPolling(poll(input, "wait-cleanup")).Should(Succeed())
		timeline.Mark("eviction task retired")
		Consistently(func(g Gomega, ctx context.Context) {
			d, err := input.Lab.Member(dest).Kube().AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(d.Labels).To(HaveKeyWithValue(framework.FailoverReasonLabel, string(reason)))
			rb, err := framework.GetBinding(ctx, k, ns, rbName)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(rb.Status.FailoverHistory).To(HaveLen(1), "recorded exactly once")
		}).WithContext(ctx).WithTimeout(interval(input, "consistently")).WithPolling(poll(input, "consistently")).Should(Succeed())

		if input.Fault == FaultStopCluster {
			By("starting " + source + " again: the old Deployment there is cleaned up")
			Expect(input.Lab.Faults.StartCluster(ctx, source)).To(Succeed())
			timeline.Mark(source + " started again")
			Eventually(func(ctx context.Context) (bool, error) { return input.Lab.ClusterReady(ctx, source) }).WithContext(ctx).
				WithTimeout(interval(input, "wait-cluster-ready")).WithPolling(poll(input, "wait-cluster-ready")).Should(BeTrue())
			Eventually(func(ctx context.Context) bool {
				_, err := input.Lab.Member(source).Kube().AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
				return apierrors.IsNotFound(err)
			}).WithContext(ctx).WithTimeout(interval(input, "wait-cleanup")).WithPolling(poll(input, "wait-cleanup")).Should(BeTrue(),
				"the Deployment left on %s while it was down is removed once it is back", source)
			timeline.Mark("old Deployment removed from " + source)
		}
		AddReportEntry("failover seconds (injected → Available)", timeline.Since("failure injected on "+source, "Available on "+dest))
	})

	AfterEach(func(ctx SpecContext) {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i](ctx)
		}
		dir := filepath.Join(input.ArtifactFolder, ns)
		if timeline != nil {
			Expect(timeline.Write(input.ArtifactFolder, ns+"-timeline.svg")).To(Succeed())
		}
		if CurrentSpecReport().Failed() {
			_ = input.Lab.DumpResources(ctx, ns, dir)
		}
		Expect(framework.DeleteNamespace(ctx, input.Lab.Karmada, ns)).To(Succeed())
		// Leave every member Ready for the next spec.
		for _, m := range input.Lab.MemberNames() {
			Eventually(func(ctx context.Context) (bool, error) { return input.Lab.ClusterReady(ctx, m) }).WithContext(ctx).
				WithTimeout(interval(input, "wait-cluster-ready")).WithPolling(poll(input, "wait-cluster-ready")).Should(BeTrue(), "cluster %s Ready again", m)
			keys, err := input.Lab.ClusterNoExecuteTaints(ctx, m)
			Expect(err).NotTo(HaveOccurred())
			Eventually(func(ctx context.Context) ([]string, error) { return input.Lab.ClusterNoExecuteTaints(ctx, m) }).WithContext(ctx).
				WithTimeout(interval(input, "wait-cluster-ready")).Should(BeEmpty(), "NoExecute taints left on %s: %v", m, keys)
		}
	}, NodeTimeout(5*time.Minute))
}

func interval(in FailoverSpecInput, key string) time.Duration {
	return in.E2EConfig.Timeout("failover", key)
}

func poll(in FailoverSpecInput, key string) time.Duration {
	return in.E2EConfig.Polling("failover", key)
}
