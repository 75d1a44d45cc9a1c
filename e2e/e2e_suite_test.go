//go:build e2e

// Package e2e holds the failover scenarios. They run against any lab that
// writes upstream's kubeconfigs; with the hermetic lab (the default) the suite
// brings the lab up itself when it is not up, and takes it down again at the
// end. Run them with `make e2e` (all) or `make e2e-smoke` (label smoke).
package e2e

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/karmada-failover/lab/e2e/framework"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/kind"
	"github.com/karmada-failover/lab/lab/local"
)

var (
	configPath     = flag.String("e2e.config", "config/e2e.yaml", "path to the e2e configuration (intervals)")
	artifactFolder = flag.String("e2e.artifacts-folder", "", "folder for artifacts (default _output/e2e/<time>; $ARTIFACTS overrides)")
	keepLab        = flag.Bool("e2e.keep-lab", os.Getenv("E2E_KEEP_LAB") == "1", "leave a lab the suite brought up running at the end")
)

var (
	e2eConfig *framework.Config
	lab       *framework.Lab
	localLab  *local.Lab
	kindLab   *kind.Lab
	broughtUp bool
	artifacts string
	// historyLimit is the lab's --failover-history-limit (LAB_FAILOVER_HISTORY_LIMIT).
	historyLimit int
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "failover-lab-e2e")
}

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	root, err := filepath.Abs("..")
	Expect(err).NotTo(HaveOccurred())
	cfg, err := config.Load(root)
	Expect(err).NotTo(HaveOccurred())
	if cfg.Provider == config.ProviderKind {
		kl, err := kind.New(cfg)
		Expect(err).NotTo(HaveOccurred())
		if st, err := kind.ReadState(cfg); err != nil || !st.Ready {
			By("bringing the kind lab up (it was not up)")
			Expect(kl.Up(ctx, GinkgoWriter)).To(Succeed())
			broughtUp = true
		}
		return nil
	}
	l := local.New(cfg)
	if st, err := local.ReadState(cfg); err != nil || !st.Ready || !l.Running() {
		By("bringing the hermetic lab up (it was not up)")
		Expect(l.Up(ctx, GinkgoWriter, os.Getenv("LAB_RETAIN") == "1")).To(Succeed())
		broughtUp = true
	}
	return nil
}, func(ctx SpecContext, _ []byte) {
	var err error
	e2eConfig, err = framework.LoadConfig(*configPath)
	Expect(err).NotTo(HaveOccurred())
	root, _ := filepath.Abs("..")
	cfg, err := config.Load(root)
	Expect(err).NotTo(HaveOccurred())
	historyLimit = cfg.FailoverHistoryLimit
	var faults framework.FaultInjector
	if cfg.Provider == config.ProviderKind {
		kindLab, err = kind.New(cfg)
		Expect(err).NotTo(HaveOccurred())
		faults, err = framework.NewKindFaults(kindLab)
		Expect(err).NotTo(HaveOccurred())
	} else {
		localLab = local.New(cfg)
		faults = framework.LocalFaults{Lab: localLab}
	}
	lab, err = framework.NewLab(cfg.KarmadaKubeconfig(), cfg.MembersKubeconfig(), faults)
	Expect(err).NotTo(HaveOccurred())
	lab.Provider = string(cfg.Provider)
	if localLab != nil {
		lab.FlinkOutputDir = cfg.FlinkOutputDir()
		if creds, err := localLab.ReadS3Credentials(); err == nil {
			lab.Checkpoints = &framework.CheckpointStore{Endpoint: creds.Endpoint, Region: creds.Region, AccessKey: creds.AccessKey, SecretKey: creds.SecretKey}
		}
	}
	lab.LogDirs = []string{cfg.LogDir(), filepath.Join(cfg.KwokDir(), "clusters")}
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
		if kindLab != nil {
			Expect(kindLab.Down(ctx, GinkgoWriter)).To(Succeed())
			return
		}
		Expect(localLab.Down(ctx, GinkgoWriter)).To(Succeed())
	}
}, NodeTimeout(2*time.Minute))
