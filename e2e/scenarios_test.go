//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"

	policyv1alpha1 "github.com/karmada-io/karmada/pkg/apis/policy/v1alpha1"

	labapi "github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
)

// Labels: smoke (fast) and ci (the failovers every CI run proves), both run by
// `make test` (make e2e-smoke); lab (needs a running lab), fault
// (injects a failure), crash (a member crashes: SIGKILL, no grace), partition
// (Karmada loses the network to a member that keeps running), slow (a
// minute or more), flink (runs Flink), kyverno (Kyverno restores: the
// hermetic lab switches to it for those specs).
//
// Specs run in the order written by default, and in any order (make e2e
// E2E_RANDOMIZE=1): each spec owns its namespace and heals the faults it
// injects, and the suite checks after every spec that the lab is as the next
// one needs it (e2e_suite_test.go), failing the spec that left it otherwise.

var _ = Describe("First placement", Label("smoke", "lab"), func() {
	FirstPlacementSpec(context.TODO(), func() FirstPlacementSpecInput {
		return FirstPlacementSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Cluster: members(0)[0]}
	})
})

var _ = Describe("Cluster failover by a NoExecute taint", Label("ci", "lab", "fault"), func() {
	FailoverSpec(context.TODO(), func() FailoverSpecInput {
		return FailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerTaint, Candidates: members(0, 1)}
	})
})

var _ = Describe("Cluster failover when the member cluster crashes", Label("lab", "fault", "crash", "slow"), func() {
	FailoverSpec(context.TODO(), func() FailoverSpecInput {
		return FailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerStopCluster, Candidates: members(1, 2),
			PurgeMode: policyv1alpha1.PurgeModeGracefully}
	})
})

var _ = Describe("Application failover when the pods stop being ready", Label("lab", "fault"), func() {
	FailoverSpec(context.TODO(), func() FailoverSpecInput {
		return FailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerPodsNotReady, Candidates: members(0, 2)}
	})
})

var _ = Describe("Application failover when the image cannot be pulled", Label("lab", "fault"), func() {
	FailoverSpec(context.TODO(), func() FailoverSpecInput {
		return FailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerImagePull, Candidates: members(1, 2)}
	})
})

var _ = Describe("Consecutive failovers past the history limit", Label("lab", "fault", "slow"), func() {
	ConsecutiveFailoversSpec(context.TODO(), func() ConsecutiveFailoversSpecInput {
		return ConsecutiveFailoversSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Failovers: historyLimit + 1, HistoryLimit: historyLimit}
	})
})

var _ = Describe("Divided workload, its clusters fail", Label("lab", "fault"), func() {
	DividedFailoverSpec(context.TODO(), func() DividedFailoverSpecInput {
		return DividedFailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts}
	})
})

var _ = Describe("Cluster failover with purge mode Gracefully", Label("lab", "fault"), func() {
	FailoverSpec(context.TODO(), func() FailoverSpecInput {
		return FailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerTaint, Candidates: members(1, 2),
			PurgeMode: policyv1alpha1.PurgeModeGracefully}
	})
})

// Purge mode Never exists for application failover only (Karmada's validation).
var _ = Describe("Application failover with purge mode Never", Label("lab", "fault"), func() {
	FailoverSpec(context.TODO(), func() FailoverSpecInput {
		return FailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerPodsNotReady, Candidates: members(0, 2),
			PurgeMode: policyv1alpha1.Never}
	})
})

var _ = Describe("FailoverHistory gate off", Label("lab", "fault"), func() {
	FeatureGateOffSpec(context.TODO(), func() FeatureGateOffSpecInput {
		return FeatureGateOffSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Candidates: members(0, 1)}
	})
})

var _ = Describe("Bad input: missing and long preserved values, forged marker", Label("lab", "fault"), func() {
	BadInputSpec(context.TODO(), func() BadInputSpecInput {
		return BadInputSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Candidates: members(1, 2)}
	})
})

var _ = Describe("ResourceBinding CRD without failoverHistory (binaries upgraded before the CRDs)", Label("lab", "fault"), func() {
	CRDSkewSpec(context.TODO(), func() CRDSkewSpecInput {
		return CRDSkewSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Candidates: members(0, 1)}
	})
})

var _ = Describe("karmada-controller-manager killed during a failover", Label("lab", "fault"), func() {
	for _, at := range []KillPoint{KillAfterTask, KillAfterHistory, KillAfterMarker} {
		Context(string(at), func() {
			ControllerRestartSpec(context.TODO(), func() ControllerRestartSpecInput {
				return ControllerRestartSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Candidates: members(0, 2),
					At: []KillPoint{at}, HistoryLimit: historyLimit}
			})
		})
	}
})

var _ = Describe("karmada-controller-manager killed in 20 consecutive failovers, at each point in turn", Label("lab", "fault", "slow"), func() {
	ControllerRestartSpec(context.TODO(), func() ControllerRestartSpecInput {
		return ControllerRestartSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Candidates: members(0, 1),
			At: []KillPoint{KillAfterTask, KillAfterHistory, KillAfterMarker}, Failovers: 20, HistoryLimit: historyLimit}
	})
})

var _ = Describe("Cluster-scoped resource (ClusterResourceBinding)", Label("lab", "fault"), func() {
	ClusterScopedSpec(context.TODO(), func() ClusterScopedSpecInput {
		return ClusterScopedSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Candidates: members(0, 1)}
	})
})

var _ = Describe("The checkpoint store restarted", Label("ci", "lab", "fault"), func() {
	CheckpointStoreRestartSpec(context.TODO(), func() CheckpointStoreRestartSpecInput {
		return CheckpointStoreRestartSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Cluster: members(0)[0]}
	})
})

var _ = Describe("Flink cluster failover: the member crashes", Label("ci", "lab", "fault", "crash", "flink", "slow"), func() {
	FlinkFailoverSpec(context.TODO(), func() FlinkFailoverSpecInput {
		return FlinkFailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerStopCluster, Candidates: members(0, 1),
			RestartRunnerOnDestination: true}
	})
})

// A replicated checkpoint store behind: the newest checkpoint's _metadata is
// there, one of its state files is not. The restore takes the newest
// restorable checkpoint instead of one Flink cannot open.
var _ = Describe("Flink cluster failover with the checkpoint store's replica behind: restored from the newest restorable checkpoint", Label("lab", "fault", "crash", "flink", "slow"), func() {
	FlinkFailoverSpec(context.TODO(), func() FlinkFailoverSpecInput {
		return FlinkFailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerStopCluster, Candidates: members(1, 0),
			ReplicationLag: true}
	})
})

// The operator's finalizer keeps the old FlinkDeployment, and its job, for as
// long as its deletion takes: Directly must wait until it is gone.
var _ = Describe("Flink cluster failover by a maintenance drain, purge mode Directly, the old job's deletion taking 20s: one writer at a time", Label("ci", "lab", "fault", "flink", "slow"), func() {
	FlinkFailoverSpec(context.TODO(), func() FlinkFailoverSpecInput {
		return FlinkFailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerTaint, Candidates: members(2, 0),
			DeletionTime: 20 * time.Second}
	})
})

// A deletion that never completes (FLINK-40388): the failover waits, the
// binding says why, and the user unblocks it.
var _ = Describe("Flink application failover whose old deletion never completes (FLINK-40388), purge mode Directly: the failover waits and the binding says why", Label("lab", "fault", "flink", "slow"), func() {
	FlinkStuckDeletionSpec(context.TODO(), func() FlinkStuckDeletionSpecInput {
		return FlinkStuckDeletionSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Candidates: members(2, 0)}
	})
})

// A planned move with the operator's savepoint on deletion: the final
// savepoint is the newest state, and the restore starts from it.
var _ = Describe("Flink planned move: a maintenance drain with savepoint on deletion, purge mode Directly: restored from the final savepoint, nothing reprocessed", Label("lab", "fault", "flink", "slow"), func() {
	FlinkFailoverSpec(context.TODO(), func() FlinkFailoverSpecInput {
		return FlinkFailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerTaint, Candidates: members(1, 2),
			SavepointOnDeletion: true}
	})
})

var _ = Describe("FlinkDeployment runner restarted under a running job", Label("ci", "lab", "flink"), func() {
	FlinkRunnerRestartSpec(context.TODO(), func() FlinkMemberSpecInput {
		return FlinkMemberSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Cluster: members(2)[0]}
	})
})

var _ = Describe("FlinkDeployment spec changes, one per upgradeMode", Label("lab", "flink"), func() {
	FlinkUpgradeSpec(context.TODO(), func() FlinkMemberSpecInput {
		return FlinkMemberSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Cluster: members(1)[0]}
	})
})

var _ = Describe("Flink cluster failover across a partition, purge mode Directly: no second job until the heal", Label("lab", "fault", "partition", "flink", "slow"), func() {
	FlinkPartitionSpec(context.TODO(), func() FlinkPartitionSpecInput {
		return FlinkPartitionSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Candidates: members(0, 2),
			PurgeMode: policyv1alpha1.PurgeModeDirectly}
	})
})

var _ = Describe("Flink cluster failover when the member crashes, purge mode Directly: no second job until the member is back", Label("lab", "fault", "crash", "flink", "slow"), func() {
	FlinkPartitionSpec(context.TODO(), func() FlinkPartitionSpecInput {
		return FlinkPartitionSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Candidates: members(1, 2),
			PurgeMode: policyv1alpha1.PurgeModeDirectly, Fault: labapi.FaultStopCluster}
	})
})

// Purge mode Never exists for application failover only: a crash or a
// partition fails over by cluster failover, where Karmada refuses Never.
var _ = Describe("Purge mode Never for a crash or a partition (cluster failover) is refused by Karmada", Label("lab", "fault"), func() {
	ClusterPurgeModeNeverSpec(context.TODO(), func() ClusterPurgeModeNeverSpecInput {
		return ClusterPurgeModeNeverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts}
	})
})

var _ = Describe("Flink cluster failover across a partition, purge mode Gracefully: two jobs write at once (upstream behaviour)", Label("lab", "fault", "partition", "flink", "slow"), func() {
	FlinkPartitionSpec(context.TODO(), func() FlinkPartitionSpecInput {
		return FlinkPartitionSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Candidates: members(1, 2),
			PurgeMode: policyv1alpha1.PurgeModeGracefully}
	})
})

var _ = Describe("Flink job while the link to its member flaps, purge mode Directly", Label("lab", "fault", "partition", "flink", "slow"), func() {
	FlinkFlapSpec(context.TODO(), func() FlinkFlapSpecInput {
		return FlinkFlapSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Candidates: members(0, 1),
			Period: 5 * time.Second, Duration: time.Minute}
	})
})

var _ = Describe("Flink application failover: the job loses its task slots, then its FlinkDeployment is re-created", Label("lab", "fault", "flink", "slow"), func() {
	FlinkFailoverSpec(context.TODO(), func() FlinkFailoverSpecInput {
		return FlinkFailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerFlinkStarved, Candidates: members(1, 2),
			Recreate: true}
	})
})

var _ = Describe("Flink failover A → B → C where the job never becomes healthy on B (upstream #6232)", Label("lab", "fault", "flink", "slow"), func() {
	FlinkChainSpec(context.TODO(), func() FlinkChainSpecInput {
		return FlinkChainSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Candidates: members(0, 1, 2)}
	})
})

var _ = Describe("Flink application failover with a stale initialSavepointPath in the template", Label("lab", "fault", "flink", "slow"), func() {
	FlinkFailoverSpec(context.TODO(), func() FlinkFailoverSpecInput {
		return FlinkFailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerFlinkStarved, Candidates: members(1, 2),
			StaleUserSavepoint: true}
	})
})

var _ = Describe("Flink failover without state, and a job id label forged in the template", Label("lab", "fault", "flink", "slow"), func() {
	FlinkNoStateSpec(context.TODO(), func() FlinkNoStateSpecInput {
		return FlinkNoStateSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Candidates: members(1, 2)}
	})
})

var _ = Describe("Bad input: a user forges the failover marker on a FlinkDeployment", Label("lab", "flink"), func() {
	ForgedMarkerSpec(context.TODO(), func() ForgedMarkerSpecInput {
		return ForgedMarkerSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Cluster: members(0)[0]}
	})
})

var _ = Describe("Bad input carried by Karmada: a job id that is not 32 hex characters, a checkpoint directory outside the namespace's prefix, the checkpoint store down", Label("lab", "flink", "fault"), func() {
	BadCarriedStateSpec(context.TODO(), func() BadCarriedStateSpecInput {
		return BadCarriedStateSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Cluster: members(1)[0]}
	})
})

// The seed users' own restore path: Kyverno's admission controller runs
// restore/deploy/kyverno-clusterpolicy.yaml, which asks the restore webhook's
// /locate. The hermetic lab switches its members to Kyverno for these specs
// and back (make lab-restore); a lab brought up with LAB_RESTORE=kyverno runs
// every Flink spec with Kyverno.
var _ = Describe("Restored by Kyverno", Label("lab", "flink", "kyverno"), Ordered, ContinueOnFailure, func() {
	withRestore(config.RestoreKyverno)

	Describe("Flink cluster failover: the member crashes", Label("fault", "crash", "slow"), func() {
		FlinkFailoverSpec(context.TODO(), func() FlinkFailoverSpecInput {
			return FlinkFailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerStopCluster, Candidates: members(0, 1)}
		})
	})

	Describe("Flink application failover with a stale initialSavepointPath in the template", Label("fault", "slow"), func() {
		FlinkFailoverSpec(context.TODO(), func() FlinkFailoverSpecInput {
			return FlinkFailoverSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Trigger: TriggerFlinkStarved, Candidates: members(1, 2),
				StaleUserSavepoint: true}
		})
	})

	Describe("Bad input: a user forges the failover marker on a FlinkDeployment", func() {
		ForgedMarkerSpec(context.TODO(), func() ForgedMarkerSpecInput {
			return ForgedMarkerSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Cluster: members(0)[0]}
		})
	})

	Describe("Bad input carried by Karmada: a job id that is not 32 hex characters, a checkpoint directory outside the namespace's prefix, the checkpoint store down", Label("fault"), func() {
		BadCarriedStateSpec(context.TODO(), func() BadCarriedStateSpecInput {
			return BadCarriedStateSpecInput{E2EConfig: e2eConfig, Lab: lab, ArtifactFolder: artifacts, Cluster: members(1)[0]}
		})
	})
})

// members returns the lab's members at the given positions (0 is the first), so that the
// scenarios follow the lab's member names. A spec that needs more members than the lab has
// (LAB_MEMBERS) is skipped, saying so.
func members(positions ...int) []string {
	names := lab.MemberNames()
	out := make([]string, 0, len(positions))
	for _, p := range positions {
		if p >= len(names) {
			Skip(fmt.Sprintf("needs %d members, the lab has %d (LAB_MEMBERS)", p+1, len(names)))
		}
		out = append(out, names[p])
	}
	return out
}
