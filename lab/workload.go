package lab

// The e2e suite's workload: lab/cmd/lab-workload as image WorkloadImage, built and
// loaded into every member by the kind lab (both LAB_IMAGES modes); kwok's fake nodes
// of the hermetic lab never pull it. Its container's readiness probe is WorkloadProbe,
// which the kind lab's FailPods makes fail (WorkloadUnready, WorkloadReady) while the
// container keeps running.
const WorkloadImage = "failover-lab/workload:lab"

var (
	// WorkloadProbe is the exec readiness probe of the workload's container.
	WorkloadProbe = []string{"/lab-workload", "probe"}
	// WorkloadUnready makes the probe fail; WorkloadReady makes it pass again.
	WorkloadUnready = []string{"/lab-workload", "unready"}
	WorkloadReady   = []string{"/lab-workload", "ready"}
)
