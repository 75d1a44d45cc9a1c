//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/karmada-failover/lab/e2e/framework"
	labapi "github.com/karmada-failover/lab/lab"
)

// CheckpointStoreRestartSpecInput is the input of CheckpointStoreRestartSpec.
type CheckpointStoreRestartSpecInput struct {
	E2EConfig      *framework.Config
	Lab            *framework.Lab
	ArtifactFolder string
	// Cluster whose FlinkDeployment runner's credentials are used (the hermetic lab).
	Cluster string
}

// CheckpointStoreRestartSpec: the lab's checkpoint store stopped and started again (an S3
// outage that ends) takes the requests of the clients that were running all along, signed with
// the credentials they were given when they started (the FlinkDeployment runner's own
// environment, where the lab runs it as a process of this host), and still holds what was
// written before: PUT, HEAD of a missing key (NotFound, not Forbidden), GET, LIST.
func CheckpointStoreRestartSpec(ctx context.Context, inputGetter func() CheckpointStoreRestartSpecInput) {
	var (
		input CheckpointStoreRestartSpecInput
		e     *specEnv
	)

	BeforeEach(func(ctx SpecContext) {
		input = inputGetter()
		skipUnsupported(input.Lab, labapi.FaultStopCheckpointStore)
		if input.Lab.Checkpoints == nil {
			Skip("the checkpoint store is not reachable from the suite")
		}
		e = newSpecEnv(ctx, "checkpoint-store-restart", input.E2EConfig, input.Lab, input.ArtifactFolder)
	})

	It("comes back with the same identities and data: the running clients' credentials PUT, HEAD, GET and LIST", func(ctx SpecContext) {
		held := *input.Lab.Checkpoints
		if creds, from := runnerCredentials(input.Lab, input.Cluster); creds != nil {
			By("the credentials the FlinkDeployment runner of " + input.Cluster + " holds (" + from + ")")
			held.AccessKey, held.SecretKey = creds.AccessKey, creds.SecretKey
		}
		bucket, key := labapi.CheckpointBucket, e.ns+"/before-restart"
		body := []byte("written before the store stopped")
		Expect(held.Put(ctx, bucket, key, body)).To(Succeed())
		e.cleanups = append(e.cleanups, func(ctx context.Context) { _ = held.Delete(ctx, bucket, key) })
		Expect(held.Probe(ctx, bucket, e.ns)).To(Succeed(), "the store takes the clients' requests before the fault")

		By("the checkpoint store stops: its clients' requests fail")
		Expect(labapi.Inject(ctx, input.Lab.Provider, labapi.FaultStopCheckpointStore, "")).To(Succeed())
		e.cleanups = append(e.cleanups, func(ctx context.Context) {
			_ = labapi.Heal(ctx, input.Lab.Provider, labapi.FaultStopCheckpointStore, "", labapi.StartOptions{})
		})
		Expect(held.Probe(ctx, bucket, e.ns)).NotTo(Succeed(), "a stopped store answers nothing")

		By("the checkpoint store starts again on its data")
		Expect(labapi.Heal(ctx, input.Lab.Provider, labapi.FaultStopCheckpointStore, "", labapi.StartOptions{})).To(Succeed())
		framework.WaitForCheckpointStore(ctx, framework.WaitForCheckpointStoreInput{Store: &held, Bucket: bucket, Prefix: e.ns},
			e.cfg.GetIntervals(e.name, "wait-available")...)
		got, err := held.Get(ctx, bucket, key)
		Expect(err).NotTo(HaveOccurred())
		Expect(bytes.Equal(got, body)).To(BeTrue(), "what was written before the restart is there: %q", got)
	})

	AfterEach(func(ctx SpecContext) { e.finish(ctx) }, NodeTimeout(finishTimeout))
}

// runnerCredentials reads the S3 keys from the environment of cluster's FlinkDeployment
// runner process (the hermetic lab, on Linux): what it and the Flink jobs it starts sign
// their requests with. nil where the lab does not run it as a process of this host.
func runnerCredentials(l *framework.Lab, cluster string) (*labapi.S3Credentials, string) {
	if !l.Provider.Info().Builds {
		return nil, ""
	}
	pid, ok := l.Provider.ProcessPID("flink-runner-" + cluster)
	if !ok {
		return nil, ""
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return nil, ""
	}
	creds := &labapi.S3Credentials{}
	for _, kv := range strings.Split(string(environ), "\x00") {
		if v, ok := strings.CutPrefix(kv, "AWS_ACCESS_KEY_ID="); ok {
			creds.AccessKey = v
		}
		if v, ok := strings.CutPrefix(kv, "AWS_SECRET_ACCESS_KEY="); ok {
			creds.SecretKey = v
		}
	}
	if creds.AccessKey == "" || creds.SecretKey == "" {
		return nil, ""
	}
	return creds, fmt.Sprintf("PID %d's environment", pid)
}
