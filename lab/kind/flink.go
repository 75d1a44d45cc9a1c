package kind

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/karmada-failover/lab/apis/flink"
	"github.com/karmada-failover/lab/lab/config"
)

// Flink on the kind lab where images are built (LAB_IMAGES=build): the
// operator's FlinkDeployment CRD (Karmada's tree has it) in Karmada and every
// member, and in every member the lab's FlinkDeployment runner as a
// Deployment (manifests/flink-runner.yaml), standing in for
// flink-kubernetes-operator: each job's JobManager is a pod of its own on the
// member's kubelet, from the Flink job image the lab builds. Where images are
// pulled, the real operator runs instead (installOperators).

// FlinkRunnerImage is the runner's image.
func (l *Lab) FlinkRunnerImage() string { return "failover-lab/flink-runner:" + l.ImageTag }

// FlinkRunnerData is the data manifests/flink-runner.yaml is rendered with:
// taskSlots -1 leaves Flink's default, 0 starves the member's jobs.
func FlinkRunnerData(runnerImage, jobImage, outputDir string, creds *S3Credentials, taskSlots int) map[string]any {
	return map[string]any{"Image": runnerImage, "JobImage": jobImage, "OutputDir": outputDir,
		"RunAs": fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()), "TaskSlots": strconv.Itoa(taskSlots),
		"AppliedAt": time.Now().UTC().Format(time.RFC3339Nano),
		"AccessKey": creds.AccessKey, "SecretKey": creds.SecretKey}
}

// flinkRuns tells whether the lab runs Flink jobs on its members (the runner).
func (l *Lab) flinkRuns() bool { return l.images == ImagesBuild }

func (l *Lab) installFlink(ctx context.Context) error {
	if !l.flinkRuns() {
		fmt.Fprintln(l.out, "   the real flink-kubernetes-operator runs instead (images pulled)")
		return nil
	}
	crd := filepath.Join(l.karmadaTreeFor(), filepath.FromSlash(config.FlinkCRDInKarmada))
	if _, err := os.Stat(crd); err != nil {
		return fmt.Errorf("the FlinkDeployment CRD of the Karmada tree: %w", err)
	}
	karmada, err := l.karmadaKube()
	if err != nil {
		return err
	}
	if err := karmada.applyFile(ctx, crd); err != nil {
		return err
	}
	for _, m := range l.Cfg.MemberNames() {
		k, err := l.kubeOn(m)
		if err != nil {
			return err
		}
		if err := k.applyFile(ctx, crd); err != nil {
			return err
		}
		if err := waitCRD(ctx, k); err != nil {
			return err
		}
		if err := l.applyRunner(ctx, m, -1); err != nil {
			return err
		}
	}
	for _, m := range l.Cfg.MemberNames() {
		if err := l.waitRunner(ctx, m); err != nil {
			return err
		}
	}
	return waitCRD(ctx, karmada)
}

// waitCRD waits until the FlinkDeployment CRD is Established in k's cluster.
func waitCRD(ctx context.Context, k *kube) error {
	return k.waitCondition(ctx, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", flink.CRDName, "Established", time.Minute)
}

// applyRunner applies member's runner (taskSlots as FlinkRunnerData).
func (l *Lab) applyRunner(ctx context.Context, member string, taskSlots int) error {
	creds, err := l.s3Credentials()
	if err != nil {
		return err
	}
	f, err := l.render("flink-runner.yaml", "flink-runner-"+member+".yaml",
		FlinkRunnerData(l.FlinkRunnerImage(), l.FlinkJobImage(), l.Cfg.FlinkOutputDir(), creds, taskSlots))
	if err != nil {
		return err
	}
	return l.applyOn(ctx, member, f)
}

// waitRunner waits until member's runner has rolled out and is ready
// (its FlinkDeployment informer synced).
func (l *Lab) waitRunner(ctx context.Context, member string) error {
	k, err := l.kubeOn(member)
	if err != nil {
		return err
	}
	return k.rolloutStatus(ctx, "flink-runner", "flink-runner", 3*time.Minute)
}
