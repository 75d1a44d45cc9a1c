// Package config holds the settings of a lab: where its files live, which
// binaries it runs, and the loopback ports of every process. Everything is
// read from the environment once, so `make lab-up`, `make e2e` and the
// benchmarks agree on the same lab.
package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Provider names a way of running the lab.
type Provider string

const (
	// ProviderLocal runs every component as a local process from binaries built
	// from Go modules (the default, no Docker needed).
	ProviderLocal Provider = "local"
	// ProviderKind runs the lab in kind clusters (machines with Docker).
	ProviderKind Provider = "kind"
)

// Flavour chooses which Karmada build the control plane runs.
type Flavour string

const (
	// FlavourPatched is Karmada v1.18.2 with the FailoverHistory series.
	FlavourPatched Flavour = "patched"
	// FlavourUpstream is the same Karmada version without the series.
	FlavourUpstream Flavour = "upstream"
)

// Host is the only address lab servers listen on.
const Host = "127.0.0.1"

// KarmadaContext is the kubeconfig context of the Karmada API server, as in upstream's local-up.
const KarmadaContext = "karmada-apiserver"

// Config describes one lab.
type Config struct {
	Root     string // repository root
	Dir      string // state of the running lab: _output/lab
	Provider Provider
	Karmada  Flavour
	Members  int

	Ports Ports
	Bins  Binaries

	// Timings of Karmada's failure detection, shortened from upstream's defaults so
	// a failover happens within a minute; the benchmarks report them as the floor.
	ClusterFailureThreshold string
	ClusterMonitorGrace     string
	FailoverHistoryLimit    int
	NodesPerMember          int

	// RestoreMissingGrace is the restore webhook's --missing-grace: how long it
	// denies a failed-over FlinkDeployment it has no state for before admitting
	// it to start fresh (LAB_RESTORE_MISSING_GRACE, default 90s: shorter than
	// the webhook's own 5m, so that a scenario can watch the grace end).
	RestoreMissingGrace string

	// ImagePull decides which images the hermetic lab's members can pull (kwok
	// stands in for kubelets); see ImagePullRule.
	ImagePull ImagePullRule

	// Docker is the Docker engine of the kind lab (LAB_DOCKER): auto (default:
	// the machine's engine when it runs privileged containers, otherwise the
	// lab's own dockerd), system or lab; see lab/kind/engine.
	Docker string
	// Images is how the kind lab gets its images (LAB_IMAGES): auto (default:
	// pull where registry.k8s.io answers, build otherwise), build (every image
	// built here from Debian's packages and Go modules) or pull.
	Images string

	// ProviderSet tells that LAB_PROVIDER chose the provider (otherwise commands other
	// than up act on the lab recorded as up, see lab/providers).
	ProviderSet bool
	// Retain keeps a lab that failed to come up, for inspection (LAB_RETAIN=1).
	Retain bool
	// RestoreSet tells that LAB_RESTORE chose the restore mode (the e2e suite then
	// switches a running hermetic lab to it).
	RestoreSet bool
	// Restore is how the members restore a failed-over FlinkDeployment (LAB_RESTORE):
	// webhook (default: the restore webhook's /mutate) or kyverno (Kyverno's
	// admission controller runs restore/deploy/kyverno-clusterpolicy.yaml, which
	// asks the restore webhook's /locate).
	Restore string
	// FlinkCRD is the FlinkDeployment CRD the hermetic lab installs (LAB_FLINK_CRD). ""
	// means the default: flink-kubernetes-operator's CRD as Karmada's tree ships it for its
	// own e2e tests (test/e2e/suites/base/manifest/flinkdeployments.flink.apache.org-v1.yaml
	// of the lab's Karmada source), with the operator's full schema.
	FlinkCRD string
}

// FlinkCRDInKarmada is where Karmada's tree keeps flink-kubernetes-operator's FlinkDeployment
// CRD (for its own e2e tests): the hermetic lab's default FlinkCRD.
const FlinkCRDInKarmada = "test/e2e/suites/base/manifest/flinkdeployments.flink.apache.org-v1.yaml"

// Ports are the loopback ports of the lab's processes. They sit below Linux's
// ephemeral range (32768-60999 by default), so an outgoing connection never
// holds one of them when the lab starts.
type Ports struct {
	EtcdClient, EtcdPeer     int
	EtcdMetrics              int
	KarmadaAPIServer         int
	KubeControllerManager    int
	AggregatedAPIServer      int
	Webhook                  int
	WebhookMetrics           int
	WebhookHealth            int
	ControllerManagerMetrics int
	ControllerManagerHealth  int
	SchedulerMetrics         int
	SchedulerHealth          int
	// RestoreWebhook: member i's flink-restore-webhook (restore/), which its
	// kube-apiserver calls, listens on RestoreWebhook+i.
	RestoreWebhook int
	// Kyverno: with LAB_RESTORE=kyverno, member i's Kyverno admission
	// controller (in its lab pod) is published on Kyverno+i.
	Kyverno int
	// FlinkBase: member i's Flink processes get REST ports FlinkBase+100*i .. +49,
	// and its FlinkDeployment runner a health port FlinkBase+100*i+99.
	FlinkBase int
	// S3Base: SeaweedFS (weed mini) uses S3Base+3 master, +4 volume, +5 filer,
	// +6 S3, +7 admin, and the same +10 for their gRPC ports.
	S3Base int
	// MemberBase: member i uses MemberBase + 10*i .. +7 (apiserver, etcd, etcd peer,
	// kube-controller-manager, kube-scheduler, kwok-controller, and the lab's
	// link between Karmada and the member: forwarder and its control endpoint).
	MemberBase int
}

// MemberPorts are the ports of one kwokctl member cluster.
type MemberPorts struct {
	APIServer, Etcd, EtcdPeer, ControllerManager, Scheduler, KwokController int
	// Link is where Karmada reaches the member's API server (the Cluster's
	// apiEndpoint): the lab-link forwarder, which LinkControl partitions and heals.
	Link, LinkControl int
}

// Member returns the ports of member m.
func (p Ports) Member(m Member) MemberPorts {
	b := p.MemberBase + 10*int(m)
	return MemberPorts{APIServer: b, Etcd: b + 1, EtcdPeer: b + 2, ControllerManager: b + 3, Scheduler: b + 4, KwokController: b + 5,
		Link: b + 6, LinkControl: b + 7}
}

// FlinkRESTRange is the range of REST ports of member m's Flink processes.
func (p Ports) FlinkRESTRange(m Member) (int, int) {
	return p.FlinkBase + 100*int(m), p.FlinkBase + 100*int(m) + 49
}

// FlinkRunnerHealth is the health port of member m's FlinkDeployment runner.
func (p Ports) FlinkRunnerHealth(m Member) int { return p.FlinkBase + 100*int(m) + 99 }

// RestoreWebhookFor is the port of member m's restore webhook.
func (p Ports) RestoreWebhookFor(m Member) int { return p.RestoreWebhook + int(m) }

// KyvernoFor is the port of member m's Kyverno admission controller.
func (p Ports) KyvernoFor(m Member) int { return p.Kyverno + int(m) }

// S3 is the port of the lab's S3 endpoint (SeaweedFS).
func (p Ports) S3() int { return p.S3Base + 6 }

// Restore modes (LAB_RESTORE).
const (
	RestoreWebhook = "webhook"
	RestoreKyverno = "kyverno"
)

// CheckRestore says why mode is not a restore mode, or nil.
func CheckRestore(mode string) error {
	if mode != RestoreWebhook && mode != RestoreKyverno {
		return fmt.Errorf("restore mode %q: want %s or %s", mode, RestoreWebhook, RestoreKyverno)
	}
	return nil
}

// Binaries are the programs the lab runs.
type Binaries struct {
	Etcd, KubeAPIServer, KubeControllerManager, KubeScheduler, Kubectl string
	Kwok, Kwokctl                                                      string
	KarmadaControllerManager, KarmadaScheduler, KarmadaWebhook         string
	KarmadaAggregatedAPIServer, Karmadactl                             string
	// SeaweedFS is weed, the lab's S3 store (hack/build-seaweedfs.sh); optional:
	// without it the lab runs without S3.
	SeaweedFS string
	// FlinkRunner is the lab's FlinkDeployment runner (go build ./lab/cmd/flink-runner),
	// FlinkJar the job jar (lab/flink, mvn package), Java the JVM; the lab runs Flink
	// only when all three exist.
	FlinkRunner, FlinkJar, Java string
	// Link is the forwarder between Karmada and each member (go build ./lab/cmd/lab-link).
	Link string
	// Pod runs a process as a pod would (go build ./lab/cmd/lab-pod): Kyverno's
	// admission controller, which LAB_RESTORE=kyverno runs in every member
	// (make kyverno builds it, and copies its CRDs to crds/ beside it).
	Pod, Kyverno string
	// KwokStages is the folder of kwok's default stages (node-initialize,
	// node-heartbeat-with-lease, pod-ready, pod-complete, pod-delete) copied from
	// the kwok module by hack/build-lab-binaries.sh; LAB_KWOK_STAGES overrides it.
	KwokStages string
	// Kind and Helm drive the kind lab (hack/build-kind-tools.sh).
	Kind, Helm string
}

// Member is a member cluster of the lab, numbered from 1; its cluster name is
// member<i>, as in upstream's local-up.
type Member int

// Name is m's cluster name.
func (m Member) Name() string { return fmt.Sprintf("member%d", int(m)) }

func (m Member) String() string { return m.Name() }

// MemberList lists the lab's members in order.
func (c *Config) MemberList() []Member {
	out := make([]Member, 0, c.Members)
	for i := 1; i <= c.Members; i++ {
		out = append(out, Member(i))
	}
	return out
}

// MemberNames are the names of the lab's members, in order.
func (c *Config) MemberNames() []string {
	out := make([]string, 0, c.Members)
	for _, m := range c.MemberList() {
		out = append(out, m.Name())
	}
	return out
}

// MaxMembers is the most members a lab has (LAB_MEMBERS).
const MaxMembers = 20

// AnyMember is the member named name in a lab of MaxMembers, for what a lab of
// more members than this configuration's may have left behind.
func AnyMember(name string) (Member, bool) {
	m, err := (&Config{Members: MaxMembers}).Member(name)
	return m, err == nil
}

// Member is the member of this lab named name, or an error naming the lab's
// members.
func (c *Config) Member(name string) (Member, error) {
	for _, m := range c.MemberList() {
		if m.Name() == name {
			return m, nil
		}
	}
	return 0, fmt.Errorf("%q is not a member of this lab (members member1..member%d)", name, c.Members)
}

// Paths of the files a running lab writes under Dir.
func (c *Config) PKIDir() string            { return filepath.Join(c.Dir, "pki") }
func (c *Config) LogDir() string            { return filepath.Join(c.Dir, "logs") }
func (c *Config) PIDDir() string            { return filepath.Join(c.Dir, "pids") }
func (c *Config) DataDir() string           { return filepath.Join(c.Dir, "data") }
func (c *Config) ManifestDir() string       { return filepath.Join(c.Dir, "manifests") }
func (c *Config) KwokDir() string           { return filepath.Join(c.Dir, "kwok") }
func (c *Config) KarmadaKubeconfig() string { return filepath.Join(c.Dir, "karmada.config") }
func (c *Config) MembersKubeconfig() string { return filepath.Join(c.Dir, "members.config") }
func (c *Config) StateFile() string         { return filepath.Join(c.Dir, "lab.json") }
func (c *Config) S3Dir() string             { return filepath.Join(c.Dir, "s3") }

// FlinkOutputDir holds the committed output (FileSink) of the lab's Flink jobs,
// <namespace>/<name>/part-*: a file:// directory every member's Flink
// processes reach, read by `lab flink verify`.
func (c *Config) FlinkOutputDir() string { return filepath.Join(c.Dir, "flink-output") }

// Load reads the configuration from the environment:
//
//	LAB_PROVIDER (local|kind), LAB_KARMADA (patched|upstream), LAB_MEMBERS (default 3),
//	LAB_DIR (default _output/lab; _output/lab-kind for LAB_PROVIDER=kind), LAB_NODES_PER_MEMBER (default 4),
//	LAB_FAILOVER_HISTORY_LIMIT (default 5),
//	LAB_RESTORE_MISSING_GRACE (the restore webhook's --missing-grace, default 90s),
//	LAB_CLUSTER_FAILURE_THRESHOLD (10s), LAB_CLUSTER_MONITOR_GRACE_PERIOD (20s),
//	LAB_UNPULLABLE_IMAGES, LAB_PULLABLE_IMAGES (image prefixes, see ImagePullRule),
//	LAB_RETAIN=1 (keep a lab that failed to come up), LAB_RESTORE (kind: webhook|kyverno),
//	LAB_DOCKER (kind: auto|system|lab, the Docker engine), LAB_IMAGES (kind: auto|build|pull),
//	LAB_FLINK_CRD (the FlinkDeployment CRD of the hermetic lab),
//	LAB_BIN_<NAME>, LAB_JAVA, LAB_FLINK_JAR, LAB_KWOK_STAGES to use a binary or file from
//	elsewhere (see Binaries).
//
// LAB_ROOT (the repository, read by the lab command before Load) is the one other variable.
func Load(root string) (*Config, error) {
	c, err := LoadProvider(root, Provider(env("LAB_PROVIDER", string(ProviderLocal))))
	if c != nil {
		c.ProviderSet = env("LAB_PROVIDER", "") != ""
	}
	return c, err
}

// LoadProvider is Load for the given provider, whatever LAB_PROVIDER says: to look at the
// other provider's lab (see lab/providers.Open).
func LoadProvider(root string, provider Provider) (*Config, error) {
	c := &Config{
		Root:                    root,
		Provider:                provider,
		Karmada:                 Flavour(env("LAB_KARMADA", string(FlavourPatched))),
		ClusterFailureThreshold: env("LAB_CLUSTER_FAILURE_THRESHOLD", "10s"),
		ClusterMonitorGrace:     env("LAB_CLUSTER_MONITOR_GRACE_PERIOD", "20s"),
		RestoreMissingGrace:     env("LAB_RESTORE_MISSING_GRACE", "90s"),
		Ports: Ports{
			EtcdClient: 24379, EtcdPeer: 24380, EtcdMetrics: 24381, KarmadaAPIServer: 24443, KubeControllerManager: 24257,
			AggregatedAPIServer: 24444, Webhook: 24445, WebhookMetrics: 24446, WebhookHealth: 24447,
			ControllerManagerMetrics: 24480, ControllerManagerHealth: 24481,
			SchedulerMetrics: 24490, SchedulerHealth: 24491,
			S3Base:         24330,
			FlinkBase:      26000,
			RestoreWebhook: 24600,
			Kyverno:        24650,
			MemberBase:     25000,
		},
	}
	// Each provider has its own folder, so both labs can exist side by side.
	dir := filepath.Join(root, "_output", "lab")
	if c.Provider == ProviderKind {
		dir = filepath.Join(root, "_output", "lab-kind")
	}
	c.Dir = env("LAB_DIR", dir)
	c.Retain = env("LAB_RETAIN", "") == "1"
	c.Docker = env("LAB_DOCKER", "auto")
	c.Images = env("LAB_IMAGES", "auto")
	c.RestoreSet = env("LAB_RESTORE", "") != ""
	c.Restore = env("LAB_RESTORE", RestoreWebhook)
	if err := CheckRestore(c.Restore); err != nil {
		return nil, fmt.Errorf("LAB_RESTORE: %w", err)
	}
	c.FlinkCRD = env("LAB_FLINK_CRD", "")
	var err error
	if c.Members, err = envInt("LAB_MEMBERS", 3, 1, MaxMembers); err != nil {
		return nil, err
	}
	if c.NodesPerMember, err = envInt("LAB_NODES_PER_MEMBER", 4, 1, 500); err != nil {
		return nil, err
	}
	if c.FailoverHistoryLimit, err = envInt("LAB_FAILOVER_HISTORY_LIMIT", 5, 1, 100); err != nil {
		return nil, err
	}
	if c.ImagePull, err = loadImagePullRule(); err != nil {
		return nil, err
	}
	switch c.Provider {
	case ProviderLocal, ProviderKind:
	default:
		return nil, fmt.Errorf("LAB_PROVIDER=%q: want %q (default) or %q", c.Provider, ProviderLocal, ProviderKind)
	}
	switch c.Karmada {
	case FlavourPatched, FlavourUpstream:
	default:
		return nil, fmt.Errorf("LAB_KARMADA=%q: want %q (default) or %q", c.Karmada, FlavourPatched, FlavourUpstream)
	}
	c.Bins = discoverBinaries(root, c.Karmada)
	return c, nil
}

func env(key, def string) string {
	if v := strings.TrimSpace(os.Getenv(key)); v != "" {
		return v
	}
	return def
}

func envInt(key string, def, lo, hi int) (int, error) {
	v := os.Getenv(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s=%q: want a whole number from %d to %d", key, v, lo, hi)
	}
	return n, nil
}
