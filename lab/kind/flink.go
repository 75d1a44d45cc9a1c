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
	"github.com/karmada-failover/lab/lab/internal/poll"
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
	if _, err := l.run(ctx, "karmada-flink-crd", l.Cfg.Bins.Kubectl, "--kubeconfig", l.Cfg.KarmadaKubeconfig(), "apply", "--server-side", "-f", crd); err != nil {
		return err
	}
	for _, m := range l.members() {
		if _, err := l.kubectlOn(ctx, m, "apply", "--server-side", "-f", crd); err != nil {
			return err
		}
		if err := l.waitCRD(ctx, l.kubeconfigOf(m), m); err != nil {
			return err
		}
		if err := l.applyRunner(ctx, m, -1); err != nil {
			return err
		}
	}
	for _, m := range l.members() {
		if err := l.waitRunner(ctx, m); err != nil {
			return err
		}
	}
	return l.waitCRD(ctx, l.Cfg.KarmadaKubeconfig(), "Karmada")
}

// waitCRD waits until the FlinkDeployment CRD is Established (kubectl wait
// gives up at once when it reads the CRD before its first conditions).
func (l *Lab) waitCRD(ctx context.Context, kubeconfig, where string) error {
	return poll.Until(ctx, time.Minute, time.Second, "the FlinkDeployment CRD Established in "+where, func(ctx context.Context) (bool, error) {
		_, err := l.run(ctx, "flink-crd-wait", l.Cfg.Bins.Kubectl, "--kubeconfig", kubeconfig,
			"wait", "--for=condition=Established", "--timeout=10s", "crd/"+flink.CRDName)
		return err == nil, nil
	})
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
	_, err = l.kubectlOn(ctx, member, "apply", "--server-side", "-f", f)
	return err
}

// waitRunner waits until member's runner has rolled out and is ready
// (its FlinkDeployment informer synced).
func (l *Lab) waitRunner(ctx context.Context, member string) error {
	_, err := l.kubectlOn(ctx, member, "-n", "flink-runner", "rollout", "status", "deployment/flink-runner", "--timeout=3m")
	return err
}
