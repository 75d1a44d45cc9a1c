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
	if st, err := p.State(); err != nil || !st.Ready || !running(p) {
		By("bringing the " + string(p.Name()) + " lab up (it was not up)")
		Expect(p.Up(ctx, labapi.UpOptions{Out: GinkgoWriter, Retain: p.Config().Retain})).To(Succeed())
		broughtUp = true
	}
	// LAB_RESTORE=kyverno make flink-demo on a running lab: restore as asked.
	if cfg := p.Config(); cfg.RestoreSet {
		r, ok := p.(labapi.RestoreModes)
		switch st, _ := p.State(); {
		case ok && r.Restore() != cfg.Restore:
			By("switching the members' restore path to " + cfg.Restore + " (LAB_RESTORE)")
			Expect(r.SetRestore(ctx, cfg.Restore)).To(Succeed())
		case !ok && st != nil && st.Restore != cfg.Restore:
			Fail(fmt.Sprintf("LAB_RESTORE=%s, but the running %s lab restores with %s and chooses it when it comes up: make lab-down, then LAB_RESTORE=%s make lab-up",
				cfg.Restore, p.Name(), st.Restore, cfg.Restore))
		}
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
	if store, ok := provider.(labapi.CheckpointStore); ok {
		if creds, err := store.S3Credentials(); err == nil {
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
		Eventually(func(ctx context.Context) (bool, error) { return lab.ClusterReady(ctx, m) }).WithContext(ctx).
			WithTimeout(e2eConfig.GetIntervals("suite", "wait-cluster-ready")[0].(time.Duration)).Should(BeTrue(), "cluster %s Ready", m)
	}
}, NodeTimeout(45*time.Minute)) // a cold kind lab takes its time (images, charts)

var _ = SynchronizedAfterSuite(func() {}, func(ctx SpecContext) {
	if broughtUp && !*keepLab {
		By("taking down the lab the suite brought up")
		Expect(provider.Down(ctx, GinkgoWriter)).To(Succeed())
	}
}, NodeTimeout(2*time.Minute))

// running tells whether the lab's processes run (the hermetic lab's record may outlive them:
// it tells by its PID files).
func running(p labapi.Provider) bool {
	if l, ok := p.(interface{ Running() bool }); ok {
		return l.Running()
	}
	return true
}
