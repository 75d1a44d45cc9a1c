//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	"github.com/karmada-failover/lab/e2e/framework"
	labapi "github.com/karmada-failover/lab/lab"
)

// FlinkFlapSpecInput is the input of FlinkFlapSpec.
type FlinkFlapSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	Candidates     []string
	// Period between a partition and a heal, and how long the link flaps.
	Period, Duration time.Duration
}

// FlinkFlapSpec: the network between Karmada and the member running a
// checkpointed Flink job (cluster failover, purge mode Directly) breaks and
// recovers in turn. A user observes: whatever Karmada decides while the link
// flaps, at no moment do two members hold the FlinkDeployment, and once the
// link is stable again one job runs and the committed output holds every
// sequence exactly once.
func FlinkFlapSpec(ctx context.Context, inputGetter func() FlinkFlapSpecInput) {
	var (
		input FlinkFlapSpecInput
		e     *specEnv
	)
	const name = "flapping"

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		skipWithoutFlinkRunner(input.Lab)
		skipUnsupported(input.Lab, labapi.FaultPartition)
		Expect(input.Period).To(BeNumerically(">", 0), "Invalid argument. Period")
		Expect(input.Duration).To(BeNumerically(">", input.Period), "Invalid argument. Duration")
		e = newSpecEnv(ctx, "flink-flap", input.E2EConfig, input.Lab, input.ArtifactFolder)
		e.timeline = framework.NewTimeline(fmt.Sprintf("Flink job while the link to its member flaps every %s (%s)", input.Period, e.ns))
	})

	It("never runs the FlinkDeployment on two members at once, and commits every sequence exactly once", func(ctx SpecContext) {
		template, _ := e.flinkTemplate(name)
		e.createFlink(ctx, template, input.Candidates, &policyv1alpha1.FailoverBehavior{
			Cluster: &policyv1alpha1.ClusterFailoverBehavior{PurgeMode: policyv1alpha1.PurgeModeDirectly, StatePreservation: jobIDState("{.jobStatus.jobId}")},
		})
		source, _ := e.waitFlinkCheckpointed(ctx, name, 2)
		e.timeline.Mark("job RUNNING on " + source)

		By(fmt.Sprintf("flapping the link to %s every %s for %s", source, input.Period, input.Duration))
		e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = input.Lab.Provider.Partition(ctx, source, true) })
		flapped := make(chan error, 1)
		go func() {
			defer GinkgoRecover()
			var err error
			heal := false
			for end := time.Now().Add(input.Duration); err == nil && time.Now().Before(end); heal = !heal {
				if err = input.Lab.Provider.Partition(ctx, source, heal); err == nil {
					time.Sleep(input.Period)
				}
			}
			flapped <- errors.Join(err, input.Lab.Provider.Partition(ctx, source, true))
		}()
		var flapErr error
		done := false
		for !done {
			select {
			case flapErr = <-flapped:
				done = true
			case <-time.After(time.Second):
				on := framework.FlinkHolders(ctx, input.Lab, input.Candidates, e.ns, name)
				Expect(len(on)).To(BeNumerically("<=", 1), "the FlinkDeployment is on %v at once", on)
			}
		}
		Expect(flapErr).NotTo(HaveOccurred())
		e.timeline.Mark("link stable again")

		By("waiting for one job to run and commit past the flapping")
		where := framework.WaitForFlinkOnOneMember(ctx, framework.WaitForFlinkOnOneMemberInput{
			Lab: input.Lab, Namespace: e.ns, Name: name, Candidates: input.Candidates, Checkpoints: 2,
		}, e.cfg.GetIntervals(e.name, "wait-flink-failover")...)
		rb, err := framework.GetBinding(ctx, input.Lab.Karmada, e.ns, framework.BindingName(name, "FlinkDeployment"))
		Expect(err).NotTo(HaveOccurred())
		report, err := input.Lab.VerifyFlinkOutput(e.ns, name)
		Expect(err).NotTo(HaveOccurred())
		e.timeline.Mark("output verified: " + report.String())
		Expect(report.OK()).To(BeTrue(), "every sequence committed exactly once: %s", report)
		Expect(report.Overlaps()).To(BeEmpty(), "never two jobs writing at once")
		summary := fmt.Sprintf("flapped %s every %s: job on %s after it (started on %s, %d failovers recorded) · missing=%d · duplicated=%d",
			input.Duration, input.Period, where, source, len(rb.Status.FailoverHistory), report.Missing, report.Duplicated)
		AddReportEntry("flink job across a flapping link", summary)
		e.timeline.Title += " — " + summary
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}
