//go:build e2e

// Package e2e holds the failover scenarios. They run against any lab that
// writes upstream's kubeconfigs; with the hermetic lab (the default) the suite
// brings the lab up itself when it is not up, and takes it down again at the
// end. Run them with `make e2e` (all) or `make e2e-smoke` (label smoke).
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/karmada-failover/lab/e2e/framework"
	labapi "github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/providers"
)

var (
	configPath     = flag.String("e2e.config", "config/e2e.yaml", "path to the e2e configuration (intervals)")
	artifactFolder = flag.String("e2e.artifacts-folder", "", "folder for artifacts (default _output/e2e/<time>; $ARTIFACTS overrides)")
	keepLab        = flag.Bool("e2e.keep-lab", os.Getenv("E2E_KEEP_LAB") == "1", "leave a lab the suite brought up running at the end")
)

var (
	e2eConfig *framework.Config
	lab       *framework.Lab
	provider  labapi.Provider
	broughtUp bool
	artifacts string
	// historyLimit is the lab's --failover-history-limit, from its record.
	historyLimit int
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "failover-lab-e2e")
}

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	root, err := filepath.Abs("..")
	Expect(err).NotTo(HaveOccurred())
	p, _, err := providers.Open(root, false)
	Expect(err).NotTo(HaveOccurred())
	if st, err := p.State(); err != nil || !st.Ready || !p.Running() {
		By("bringing the " + string(p.Name()) + " lab up (it was not up)")
		Expect(labapi.Up(ctx, p, labapi.UpOptions{Out: GinkgoWriter, Retain: p.Config().Retain})).To(Succeed())
		broughtUp = true
	}
	// LAB_RESTORE=kyverno make flink-demo on a running lab: restore as asked.
	if cfg := p.Config(); cfg.RestoreSet && p.Restore() != cfg.Restore {
		By("switching the members' restore path to " + cfg.Restore + " (LAB_RESTORE)")
		Expect(p.SetRestore(ctx, cfg.Restore)).To(Succeed())
	}
	return nil
}, func(ctx SpecContext, _ []byte) {
	var err error
	e2eConfig, err = framework.LoadConfig(*configPath)
	Expect(err).NotTo(HaveOccurred())
	root, _ := filepath.Abs("..")
	provider, _, err = providers.Open(root, false)
	Expect(err).NotTo(HaveOccurred())
	cfg := provider.Config()
	st, err := provider.State()
	Expect(err).NotTo(HaveOccurred(), "the lab's record")
	historyLimit = st.FailoverHistoryLimit
	if historyLimit == 0 { // recorded by an older lab
		historyLimit = cfg.FailoverHistoryLimit
	}
	lab, err = framework.NewLab(cfg.KarmadaKubeconfig(), cfg.MembersKubeconfig(), provider, st)
	Expect(err).NotTo(HaveOccurred())
	{
		if creds, err := provider.S3Credentials(); err == nil {
			lab.Checkpoints = &framework.CheckpointStore{Endpoint: creds.Endpoint, Region: creds.Region, AccessKey: creds.AccessKey, SecretKey: creds.SecretKey}
		}
	}
	artifacts = *artifactFolder
	if a := os.Getenv("ARTIFACTS"); artifacts == "" && a != "" {
		artifacts = a
	}
	if artifacts == "" {
		artifacts = filepath.Join(root, "_output", "e2e", time.Now().UTC().Format("20060102-150405"))
	}
	Expect(os.MkdirAll(artifacts, 0o755)).To(Succeed())
	for _, m := range lab.MemberNames() {
		framework.WaitForClusterReady(ctx, framework.WaitForClusterReadyInput{Lab: lab, Cluster: m}, e2eConfig.GetIntervals("suite", "wait-cluster-ready")...)
	}
}, NodeTimeout(45*time.Minute)) // a cold kind lab takes its time (images, charts)

var _ = SynchronizedAfterSuite(func() {}, func(ctx SpecContext) {
	if broughtUp && !*keepLab {
		By("taking down the lab the suite brought up")
		Expect(labapi.Down(ctx, provider, GinkgoWriter)).To(Succeed())
	}
}, NodeTimeout(2*time.Minute))

// Every spec leaves the lab as the next one needs it, or fails itself. The check runs after
// the spec's own cleanup (it is the first cleanup registered, so the last to run): every
// component healthy, every member Ready and untainted, the checkpoint store taking a write with
// the credentials its clients hold, no Flink job left RESTARTING. What it finds wrong it heals
// where the lab can (a partition, the store), so the next spec starts on a healthy lab; the
// spec that left it so fails, named in the message.
var _ = BeforeEach(func() {
	DeferCleanup(func(ctx SpecContext) {
		spec := CurrentSpecReport().FullText()
		problems := waitHealthy(ctx)
		if len(problems) == 0 {
			return
		}
		healLab(ctx)
		after := waitHealthy(ctx)
		Fail(fmt.Sprintf("the spec %q left the lab unhealthy:\n  %s\nafter healing what the lab can heal: %s",
			spec, joinProblems(problems, "\n  "), orHealthy(joinProblems(after, "; "))))
	}, NodeTimeout(6*time.Minute))
})

// waitHealthy returns the lab's health problems once they are gone (nil), or the last ones
// seen when lab-health/wait-healthy has passed.
func waitHealthy(ctx context.Context) []framework.HealthProblem {
	timeout, polling := e2eConfig.Timeout("lab-health", "wait-healthy"), e2eConfig.Polling("lab-health", "wait-healthy")
	deadline := time.Now().Add(timeout)
	for {
		problems := lab.HealthProblems(ctx)
		if len(problems) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return problems
		}
		select {
		case <-ctx.Done():
		case <-time.After(polling):
		}
	}
}

// healLab heals the faults a spec may leave behind that the lab can heal at once: every
// member's link to Karmada reconnected, the checkpoint store started on its data.
func healLab(ctx context.Context) {
	for _, m := range lab.MemberNames() {
		if labapi.Supports(lab.Provider, labapi.FaultPartition) == nil {
			if err := lab.Provider.Partition(ctx, m, true); err != nil {
				GinkgoWriter.Printf("healing the link to %s: %v\n", m, err)
			}
		}
	}
	if labapi.Supports(lab.Provider, labapi.FaultStopCheckpointStore) == nil {
		if err := labapi.Heal(ctx, lab.Provider, labapi.FaultStopCheckpointStore, "", labapi.StartOptions{}); err != nil {
			GinkgoWriter.Printf("starting the checkpoint store: %v\n", err)
		}
	}
}

func joinProblems(ps []framework.HealthProblem, sep string) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, sep)
}

func orHealthy(s string) string {
	if s == "" {
		return "healthy again"
	}
	return "still " + s
}
