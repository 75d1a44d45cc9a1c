//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"
	"github.com/karmada-failover/lab/e2e/framework"
	labapi "github.com/karmada-failover/lab/lab"
)

// Trigger is how a failover scenario makes the workload fail: through the Karmada API (a
// taint, an image the member cannot pull) or with a fault of the lab (labapi.Fault).
type Trigger string

const (
	// TriggerTaint: an operator taints the cluster NoExecute (cluster failover).
	TriggerTaint Trigger = "taint"
	// TriggerStopCluster: the member's control plane stops (cluster failover
	// through NotReady and the lab's ClusterTaintPolicy).
	TriggerStopCluster Trigger = "stop-cluster"
	// TriggerPodsNotReady: the workload's pods stop being ready in the member
	// (application failover).
	TriggerPodsNotReady Trigger = "pods-not-ready"
	// TriggerImagePull: an OverridePolicy replaces the workload's image registry
	// with "fake" in the member, as Karmada's own e2e suite does; the new pods
	// cannot pull it (application failover). Works on both labs: kwok's stages
	// in the hermetic lab, a kubelet in the kind lab.
	TriggerImagePull Trigger = "image-pull"
)

// applicationFailure tells whether a fault makes the application fail (as
// opposed to the cluster).
func (f Trigger) applicationFailure() bool { return f == TriggerPodsNotReady || f == TriggerImagePull }

// The preserved state rule of the scenarios: the Deployment's replica count as
// reported by the member, carried as a label to the destination.
const stateLabel = "failover.lab.karmada.io/replicas"

// FailoverSpecInput is the input of FailoverSpec.
type FailoverSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	// Trigger decides the failover kind.
	Trigger Trigger
	// Candidates are the clusters the policy may use (the first placement takes one).
	Candidates []string
	// PurgeMode of the failover (default Directly). Karmada deletes the old
	// workload before creating the new one with Directly, which waits for an
	// unreachable cluster to come back, and hands the preserved state over; with
	// Gracefully and Never the old copy may still run, so the destination gets
	// the marker without the state.
	PurgeMode policyv1alpha1.PurgeMode
}

// FailoverSpec: a Deployment is placed on one member; the member fails; Karmada
// moves the Deployment to another candidate. A user observes: one
// status.failoverHistory item with the right reason and clusters, the failover
// marker on the destination only, staying there after the eviction is over (or,
// with purge mode Never, while the old workload stays), and the workload
// Available on the destination. The preserved state is on the Deployment Karmada
// creates there with purge mode Directly, and removed once the eviction is over;
// with Gracefully and Never it is never there and the binding carries a
// PreservedStateWithheld Warning.
func FailoverSpec(ctx context.Context, inputGetter func() FailoverSpecInput) {
	var (
		input FailoverSpecInput
		e     *specEnv
	)
	const name = "web"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		if input.Trigger == TriggerPodsNotReady {
			skipUnsupported(input.Lab, labapi.FaultFailPods)
		}
		e = newSpecEnv(ctx, "failover", input.E2EConfig, input.Lab, input.ArtifactFolder)
		Expect(len(input.Candidates)).To(BeNumerically(">=", 2), "Invalid argument. failover spec needs two candidate clusters")
		e.timeline = framework.NewTimeline(fmt.Sprintf("Failover by %s, purge mode %s (%s)", input.Trigger, purgeMode(input.PurgeMode), e.ns))
	})

	It("records the failover once, marks the destination only, and the workload is Available there", func(ctx SpecContext) {
		reason := workv1alpha2.FailoverReason("ClusterFailure")
		if input.Trigger.applicationFailure() {
			reason = "ApplicationFailure"
		}
		// The preserved state is the source's status.replicas when Karmada
		// evicts: 2, except while a rolling update is stuck on an image that
		// cannot be pulled: the two old pods stay and the one surge pod
		// (maxSurge 25%, rounded up) waits in ImagePullBackOff, so 3.
		wantState := "2"
		if input.Trigger == TriggerImagePull {
			wantState = "3"
		}
		By("propagating a Deployment to one of " + strings.Join(input.Candidates, ", "))
		e.deployWithPolicy(ctx, name, 2, framework.PolicyInput{
			Clusters: input.Candidates, TolerationSeconds: 10,
			ClusterFailover: !input.Trigger.applicationFailure(), ApplicationFailover: input.Trigger.applicationFailure(),
			StateRules: map[string]string{stateLabel: "{.replicas}"}, PurgeMode: input.PurgeMode,
		})
		placed := e.waitPlaced(ctx, name)
		Expect(placed).To(HaveLen(1))
		source := placed[0]
		Expect(e.history(ctx, name)).To(BeEmpty(), "a first placement is not a failover")
		labels, _ := e.memberMeta(ctx, source, name)
		Expect(labels).NotTo(HaveKey(workv1alpha2.FailoverReasonLabel), "no marker on the first placement")

		others := clustersExcept(input.Candidates, source)
		// What the destination's Deployment looked like when Karmada created it and
		// at every change since: the state is there only while the failover is in progress.
		versions := e.watchDeploymentLabels(ctx, others, name)
		handsOver := purgeMode(input.PurgeMode) == policyv1alpha1.PurgeModeDirectly

		By(fmt.Sprintf("making %s fail by %s", source, input.Trigger))
		e.timeline.Mark("failure injected on " + source)
		switch input.Trigger {
		case TriggerTaint:
			e.taint(ctx, source, "lab.karmada.io/fault")
		case TriggerStopCluster:
			Expect(labapi.Inject(ctx, input.Lab.Provider, labapi.FaultStopCluster, source)).To(Succeed())
			e.cleanups = append(e.cleanups, func(ctx context.Context) {
				_ = labapi.Heal(ctx, input.Lab.Provider, labapi.FaultStopCluster, source, labapi.StartOptions{})
			})
		case TriggerPodsNotReady:
			Expect(failPods(ctx, input.Lab, source, e.ns, "app="+name, false)).To(Succeed())
		case TriggerImagePull:
			op := framework.NewUnpullableImagePolicy(e.ns, name, name, []string{source})
			_, err := input.Lab.Karmada.Karmada().PolicyV1alpha1().OverridePolicies(e.ns).Create(ctx, op, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			By("seeing the new pods on " + source + " fail to pull fake/ images, as kubectl get pods shows them")
			framework.WaitForPodsWaiting(ctx, framework.WaitForPodsWaitingInput{
				Getter: input.Lab.Member(source), Namespace: e.ns, Selector: "app=" + name, Reasons: []string{"ErrImagePull", "ImagePullBackOff"},
			}, e.cfg.GetIntervals(e.name, "wait-failover")...)
			e.timeline.Mark("image pull failing on " + source)
		}

		By("waiting for Karmada to move the Deployment away from " + source)
		k := input.Lab.Karmada
		moved := framework.WaitForFailover(ctx, framework.WaitForFailoverInput{
			Lab: input.Lab, Namespace: e.ns, Name: name, Kind: "Deployment", Source: source, Timeline: e.timeline,
			Arrived: func(ctx context.Context, dest string) error {
				if _, err := input.Lab.Member(dest).Kube().AppsV1().Deployments(e.ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
					return err
				}
				e.timeline.Mark("applied on " + dest)
				if err := framework.DeploymentAvailable(ctx, input.Lab.Member(dest), e.ns, name); err != nil {
					return err
				}
				e.timeline.Mark("Available on " + dest)
				return nil
			},
		}, e.cfg.GetIntervals(e.name, "wait-failover")...)
		dest := moved.Destination

		By("checking status.failoverHistory")
		item := framework.WaitForFailoverHistory(ctx, framework.WaitForFailoverHistoryInput{
			Karmada: k, Namespace: e.ns, Name: name, Kind: "Deployment", Reason: reason,
			Items: []framework.FailoverItem{{Before: []string{source}, After: []string{dest}, Started: true, State: map[string]string{stateLabel: wantState}}},
		}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)[0]
		e.timeline.Mark("failover recorded")

		By("checking the marker on " + dest + " only, and the preserved state by purge mode")
		// The first Work rendered for the destination may come from the eviction
		// task alone (reason, from, state); the time is the history item's start
		// time, so it arrives with the render that follows the history write.
		framework.WaitForFailoverMarker(ctx, framework.WaitForFailoverMarkerInput{
			Getter: input.Lab.Member(dest), GVR: framework.DeploymentGVR, Namespace: e.ns, Name: name,
			Reason: reason, From: source, Time: item.StartTime.UTC().Format(time.RFC3339),
		}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)
		created := versions.created(dest)
		Expect(created).NotTo(BeNil(), "the watch saw Karmada create the Deployment on %s", dest)
		if handsOver {
			Expect(created.labels).To(HaveKeyWithValue(stateLabel, wantState), "purge mode Directly: the state on the Deployment Karmada created on %s", dest)
		} else {
			Expect(versions.everHad(dest, stateLabel)).To(BeFalse(), "purge mode %s: the state never reaches %s while the old copy may run", input.PurgeMode, dest)
			framework.WaitForEvent(ctx, framework.WaitForEventInput{
				Getter: k, Namespace: e.ns, Type: corev1.EventTypeWarning, Reason: "PreservedStateWithheld",
				MessageContains: []string{"purge mode " + string(input.PurgeMode), source},
			}, e.cfg.GetIntervals(e.name, "wait-scheduled")...)
			e.timeline.Mark("state withheld")
		}
		for _, m := range input.Lab.MemberNames() {
			if m == dest || (m == source && input.Trigger == TriggerStopCluster) {
				continue
			}
			labels, _ := e.memberMeta(ctx, m, name)
			Expect(labels).NotTo(HaveKey(workv1alpha2.FailoverReasonLabel), "marker on %s, which is not the destination", m)
		}

		if input.PurgeMode == policyv1alpha1.Never {
			By("purge mode Never: the old Deployment stays on " + source + " and the marker stays on " + dest)
			e.consistently(ctx, func(g Gomega, ctx context.Context) {
				_, err := input.Lab.Member(source).Kube().AppsV1().Deployments(e.ns).Get(ctx, name, metav1.GetOptions{})
				g.Expect(err).NotTo(HaveOccurred())
				labels, _ := e.memberMeta(ctx, dest, name)
				g.Expect(labels).To(HaveKeyWithValue(workv1alpha2.FailoverReasonLabel, string(reason)))
				g.Expect(e.history(ctx, name)).To(HaveLen(1), "recorded exactly once")
			}).Should(Succeed())
		} else {
			By("checking the marker outlives the eviction task")
			framework.WaitForEvictionTasksRetired(ctx, framework.WaitForEvictionTasksRetiredInput{
				Karmada: k, Namespace: e.ns, Name: name, Kind: "Deployment",
			}, e.cfg.GetIntervals(e.name, "wait-cleanup")...)
			e.timeline.Mark("eviction task retired")
			// The binding controller renders the destination's Work again once the task is gone, and
			// the execution controller updates the Deployment: the state goes a moment after the task.
			framework.WaitForPreservedStateRemoved(ctx, framework.WaitForPreservedStateRemovedInput{
				Getter: input.Lab.Member(dest), GVR: appsv1.SchemeGroupVersion.WithResource("deployments"), Namespace: e.ns, Name: name,
				StateKeys: []string{stateLabel},
			}, e.cfg.GetIntervals(e.name, "wait-cleanup")...)
			e.consistently(ctx, func(g Gomega, ctx context.Context) {
				labels, annotations := e.memberMeta(ctx, dest, name)
				g.Expect(labels).To(HaveKeyWithValue(workv1alpha2.FailoverReasonLabel, string(reason)))
				g.Expect(labels).NotTo(HaveKey(stateLabel), "the failover is complete: no state left for a re-creation to restore")
				g.Expect(annotations).NotTo(HaveKey(workv1alpha2.FailoverPreservedKeysAnnotation))
				g.Expect(e.history(ctx, name)).To(HaveLen(1), "recorded exactly once")
			}).Should(Succeed())
		}

		if input.Trigger == TriggerStopCluster {
			By("starting " + source + " again: the old Deployment there is cleaned up")
			Expect(labapi.Heal(ctx, input.Lab.Provider, labapi.FaultStopCluster, source, labapi.StartOptions{})).To(Succeed())
			e.timeline.Mark(source + " started again")
			framework.WaitForClusterReady(ctx, framework.WaitForClusterReadyInput{Lab: input.Lab, Cluster: source},
				e.cfg.GetIntervals(e.name, "wait-cluster-ready")...)
			e.timeline.Mark(source + " Ready again")
			framework.WaitForObjectDeleted(ctx, framework.WaitForObjectDeletedInput{
				Getter: input.Lab.Member(source), GVR: framework.DeploymentGVR, Namespace: e.ns, Name: name,
			}, e.cfg.GetIntervals(e.name, "wait-cleanup")...)
			e.timeline.Mark("old Deployment removed from " + source)
		}
		AddReportEntry("failover seconds (injected → Available)", e.timeline.Since("failure injected on "+source, "Available on "+dest))
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}

func purgeMode(m policyv1alpha1.PurgeMode) policyv1alpha1.PurgeMode {
	if m == "" {
		return policyv1alpha1.PurgeModeDirectly
	}
	return m
}
