package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/karmada-failover/lab/apis/flink"
	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/pki"
	"github.com/karmada-failover/lab/lab/internal/proc"
	"github.com/karmada-failover/lab/restore/cmd/flink-restore-webhook/app/options"
)

// Flink in the hermetic lab: the FlinkDeployment CRD in Karmada and in every
// member, and per member a FlinkDeployment runner (lab/flinkrunner), the lab's
// stand-in for flink-kubernetes-operator, which runs each FlinkDeployment of its
// member as a local Flink process (MiniCluster JVM) with checkpoints on the
// lab's S3 store. The runner is stopped with its member, and its Flink
// processes with it: no job survives a dead cluster.

// FlinkEnabled reports whether the lab can run Flink: the runner, the job jar,
// a JVM and the S3 store are all there.
func (l *Lab) FlinkEnabled() bool {
	b := l.Cfg.Bins
	if _, err := os.Stat(l.restoreWebhookBinary()); err != nil {
		return false
	}
	return b.FlinkRunner != "" && b.FlinkJar != "" && b.Java != "" && b.SeaweedFS != ""
}

// FlinkDisabledReason says what is missing for Flink, for the up output.
func (l *Lab) FlinkDisabledReason() string {
	b := l.Cfg.Bins
	var missing []string
	if b.FlinkRunner == "" {
		missing = append(missing, "the FlinkDeployment runner (make lab-cli)")
	}
	if b.FlinkJar == "" {
		missing = append(missing, "the Flink job jar (make flink-job)")
	}
	if b.Java == "" {
		missing = append(missing, "a JVM (java 17)")
	}
	if b.SeaweedFS == "" {
		missing = append(missing, "SeaweedFS (make lab-binaries)")
	}
	if _, err := os.Stat(l.restoreWebhookBinary()); err != nil {
		missing = append(missing, "the restore webhook (make lab-cli)")
	}
	return strings.Join(missing, ", ")
}

func runnerName(member string) string { return "flink-runner-" + member }

// flinkCRD is the FlinkDeployment CRD the lab installs: LAB_FLINK_CRD, by default the
// operator's CRD from the lab's Karmada tree (Karmada's e2e tests install the same file).
// Its structural schema makes the API servers refuse what the operator's CRD refuses: a
// misspelt field under kubectl's strict field validation, a value outside an enum.
func (l *Lab) flinkCRD() string {
	if l.Cfg.FlinkCRD != "" {
		return l.Cfg.FlinkCRD
	}
	return filepath.Join(l.sourceTree(), filepath.FromSlash(config.FlinkCRDInKarmada))
}

// RestoreWebhookBinary is the flink-restore-webhook the lab builds (make lab-cli).
func (l *Lab) restoreWebhookBinary() string {
	return filepath.Join(l.Cfg.Root, "_output", "bin", "flink-restore-webhook")
}

func restoreWebhookName(member string) string { return "flink-restore-webhook-" + member }

// restoreWebhookAddr is where member's restore webhook listens.
func (l *Lab) restoreWebhookAddr(member string) (string, error) {
	m, err := l.Cfg.Member(member)
	if err != nil {
		return "", err
	}
	return hostPort(l.Cfg.Ports.RestoreWebhookFor(m)), nil
}

// startRestoreWebhook starts member's restore webhook (restore/), as a real
// deployment runs it: one per member, in the member (it stops and starts with
// the member), with the member's kubeconfig for Events and TokenReview. It
// trusts exactly the Push-mode identity karmadactl join created for this
// member (system:serviceaccount:karmada-cluster:karmada-<member>), accepts on
// /mutate only the client certificate the member's API server presents
// (memberAdmissionConfig), and reads the lab's S3 store, its keys in the
// child's environment only.
func (l *Lab) startRestoreWebhook(ctx context.Context, member string) error {
	creds, err := l.S3Credentials()
	if err != nil {
		return fmt.Errorf("S3 credentials: %w", err)
	}
	args, err := l.restoreWebhookArgs(member)
	if err != nil {
		return err
	}
	addr, _ := l.restoreWebhookAddr(member)
	name := restoreWebhookName(member)
	if _, err := l.Proc.Start(proc.Spec{Name: name, Path: l.restoreWebhookBinary(), Args: args,
		Env: []string{"AWS_ACCESS_KEY_ID=" + creds.AccessKey, "AWS_SECRET_ACCESS_KEY=" + creds.SecretKey}}); err != nil {
		return err
	}
	return l.Proc.WaitReady(ctx, name, proc.Probe{URL: "https://" + addr + "/healthz", CAFile: l.caFile()})
}

// restoreWebhookArgs are the flags of member's restore webhook.
func (l *Lab) restoreWebhookArgs(member string) ([]string, error) {
	addr, err := l.restoreWebhookAddr(member)
	if err != nil {
		return nil, err
	}
	crt, key := l.pki(pki.RestoreWebhook)
	return []string{
		"--listen=" + addr, "--tls-cert-file=" + crt, "--tls-key-file=" + key,
		"--client-ca-file=" + l.caFile(), "--client-cert-cn=" + pki.RestoreWebhookClientCN,
		"--kubeconfig=" + l.memberKubeconfig(member),
		"--s3-endpoint=" + l.s3Endpoint(), "--s3-region=" + s3Region,
		"--sync-mode=Push", "--cluster-name=" + member,
		"--missing-grace=" + l.Cfg.RestoreMissingGrace,
	}, nil
}

// installFlink installs the CRD in Karmada and every member, and in every
// member starts its restore webhook, registers it (or, LAB_RESTORE=kyverno, sets
// up Kyverno and its ClusterPolicy, which calls the webhook's /locate) and
// starts the runner.
func (l *Lab) installFlink(ctx context.Context, members []string) error {
	mode := l.restoreMode()
	ca, err := l.caBundle()
	if err != nil {
		return err
	}
	crd := l.flinkCRD()
	if err := l.kubectl(ctx, "apply", "--server-side", "-f", crd); err != nil {
		return err
	}
	for _, m := range members {
		addr, err := l.restoreWebhookAddr(m)
		if err != nil {
			return err
		}
		webhookConfig := filepath.Join(l.Cfg.ManifestDir(), "flink-restore-webhook-"+m+".yaml")
		if err := render(filepath.Join(l.Cfg.Root, "restore", "deploy", "mutatingwebhookconfiguration-lab.yaml"), webhookConfig,
			"https://"+options.DefaultListen, "https://"+addr, "{{caBundle}}", ca); err != nil {
			return err
		}
		if err := l.startRestoreWebhook(ctx, m); err != nil {
			return err
		}
		if err := l.kubectlMember(ctx, m, "apply", "--server-side", "-f", crd); err != nil {
			return err
		}
		if err := l.waitEstablished(ctx, l.Cfg.MembersKubeconfig(), m, flink.CRDName); err != nil {
			return err
		}
		if mode == config.RestoreKyverno {
			if err := l.setUpKyverno(ctx, m); err != nil {
				return err
			}
			if err := l.waitKyvernoAdmission(ctx, m); err != nil {
				return err
			}
		} else if err := l.kubectlMember(ctx, m, "apply", "--server-side", "-f", webhookConfig); err != nil {
			return err
		}
		if err := l.startRunner(ctx, m, -1); err != nil {
			return err
		}
	}
	return l.waitEstablished(ctx, l.Cfg.KarmadaKubeconfig(), "", flink.CRDName)
}

// startRunner starts member's FlinkDeployment runner; taskSlots 0 starves its
// jobs (no TaskManager: they stay CREATED), -1 leaves Flink's default.
func (l *Lab) startRunner(ctx context.Context, member string, taskSlots int) error {
	m, err := l.Cfg.Member(member)
	if err != nil {
		return err
	}
	creds, err := l.S3Credentials()
	if err != nil {
		return fmt.Errorf("S3 credentials: %w", err)
	}
	if err := os.MkdirAll(l.runnerLogDir(m), 0o755); err != nil {
		return err
	}
	args := l.runnerArgs(m, taskSlots)
	health := hostPort(l.Cfg.Ports.FlinkRunnerHealth(m))
	// The S3 keys go in the environment of the runner only, which its Flink
	// JVMs inherit (the job's S3 file system falls back to the AWS SDK's
	// default credential chain): never on a command line, in a log or in
	// Flink's configuration (which its REST API shows).
	if _, err := l.Proc.Start(proc.Spec{Name: runnerName(member), Path: l.Cfg.Bins.FlinkRunner, Args: args,
		Env: []string{"AWS_ACCESS_KEY_ID=" + creds.AccessKey, "AWS_SECRET_ACCESS_KEY=" + creds.SecretKey}}); err != nil {
		return err
	}
	return l.Proc.WaitReady(ctx, runnerName(member), proc.Probe{URL: "http://" + health + "/healthz"})
}

// runnerLogDir holds the logs of m's runner's Flink processes.
func (l *Lab) runnerLogDir(m config.Member) string {
	return filepath.Join(l.Cfg.LogDir(), "flink", m.Name())
}

// runnerArgs are the flags of m's runner (taskSlots as startRunner's).
func (l *Lab) runnerArgs(m config.Member, taskSlots int) []string {
	lo, hi := l.Cfg.Ports.FlinkRESTRange(m)
	return []string{
		"--kubeconfig=" + l.Cfg.MembersKubeconfig(), "--context=" + m.Name(),
		"--default-jar=" + l.Cfg.Bins.FlinkJar, "--java=" + l.Cfg.Bins.Java,
		fmt.Sprintf("--rest-port-range=%d-%d", lo, hi), "--log-dir=" + l.runnerLogDir(m),
		"--health-addr=" + hostPort(l.Cfg.Ports.FlinkRunnerHealth(m)),
		"--task-slots=" + strconv.Itoa(taskSlots), "--java-opts=-Xmx384m",
		"--flink-conf=s3.endpoint=" + l.s3Endpoint(), "--flink-conf=s3.path.style.access=true",
		"--flink-conf=s3.region=" + s3Region,
	}
}

// stopRunner stops member's runner, which stops its Flink processes first.
func (l *Lab) stopRunner(member string) error {
	return l.Proc.Stop(runnerName(member), graceOf(lab.RunnerComponent))
}

// StarveFlink restarts member's runner with no task slots (starve) or with
// Flink's default: the member's jobs restart and, starved, stay CREATED, which
// Karmada's FlinkDeployment health interpretation reports as unhealthy
// (application failover). The runner keeps each job's ID across the restart.
func (l *Lab) StarveFlink(ctx context.Context, member string, starve bool) error {
	if !l.FlinkEnabled() {
		return fmt.Errorf("flink is not part of this lab: missing %s", l.FlinkDisabledReason())
	}
	if err := l.stopRunner(member); err != nil {
		return err
	}
	slots := -1
	if starve {
		slots = 0
	}
	return l.startRunner(ctx, member, slots)
}

// kubectlMember runs kubectl against a member.
func (l *Lab) kubectlMember(ctx context.Context, member string, args ...string) error {
	return l.kubectlWith(ctx, l.Cfg.MembersKubeconfig(), member, args...)
}
