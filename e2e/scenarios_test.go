//go:build e2e

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"
)

// Labels: smoke (fast, run by `make test`), lab (needs a running lab), fault
// (injects a failure), slow (a minute or more), flink (runs Flink).

var _ = Describe("First placement", Label("smoke", "lab"), func() {
	FirstPlacementSpec(context.TODO(), func() FirstPlacementSpecInput {
		return FirstPlacementSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Cluster: "member1"}
	})
})

var _ = Describe("Cluster failover by a NoExecute taint", Label("lab", "fault"), func() {
	FailoverSpec(context.TODO(), func() FailoverSpecInput {
		return FailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Fault: FaultTaint, Candidates: []string{"member1", "member2"}}
	})
})

var _ = Describe("Cluster failover by stopping the member cluster", Label("lab", "fault", "slow"), func() {
	FailoverSpec(context.TODO(), func() FailoverSpecInput {
		return FailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Fault: FaultStopCluster, Candidates: []string{"member2", "member3"},
			PurgeMode: policyv1alpha1.PurgeModeGracefully}
	})
})

var _ = Describe("Application failover when the pods stop being ready", Label("lab", "fault"), func() {
	FailoverSpec(context.TODO(), func() FailoverSpecInput {
		return FailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Fault: FaultPodsNotReady, Candidates: []string{"member1", "member3"}}
	})
})
