package kind

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/kind/pkg/apis/config/defaults"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/karmada-failover/lab/lab/config"
)

// HostCluster is the kind cluster that runs Karmada's control plane
// (karmadactl init) and the MinIO checkpoint store.
const HostCluster = "karmada-host"

// NodeImage is the kindest/node image of every cluster: the default image of
// the kind version pinned in go.mod (v0.31.0: Kubernetes v1.35.0, by digest),
// so the node image and the kind binary built from lab/tools/kind always match.
const NodeImage = defaults.Image

// Node is the node image of the lab's clusters and how it came to be.
type Node struct {
	// Image is the node image's reference.
	Image string
	// Built tells that the lab built it (lab/kind/images/build-node-image.sh,
	// LAB_IMAGES=build): Kubernetes from its Go module, the lab's etcd, and the
	// reference CNI plugins instead of kindnetd, which such a node does not carry.
	Built bool
	// EtcdImageTag is the tag of the etcd image a built node preloads
	// (kubeadm's ClusterConfiguration etcd.local.imageTag).
	EtcdImageTag string
	// KubernetesVersion is a built node's Kubernetes, the tag of the
	// control-plane images it preloads.
	KubernetesVersion string
}

// PulledNode is kind's default node image, pulled from its registry (LAB_IMAGES=pull).
var PulledNode = Node{Image: NodeImage}

// Host ports of the kind lab, on 127.0.0.1 only and below Linux's ephemeral
// range (32768+), apart from the hermetic lab's 24xxx-26xxx.
const (
	// HostAPIServerPort is the host cluster's own API server.
	HostAPIServerPort = 27400
	// MemberAPIServerBase + i is member i's API server (i from 1).
	MemberAPIServerBase = 27400
	// KarmadaAPIServerPort reaches karmada-apiserver: the same number as its
	// NodePort, because karmadactl init writes the kubeconfig with
	// https://<advertise address>:<NodePort>, and the advertise address is
	// 127.0.0.1 (which also works with Docker Desktop, where node IPs are not
	// reachable from the host).
	KarmadaAPIServerPort = KarmadaNodePort
	// S3Port reaches MinIO's S3 API (NodePort MinIONodePort).
	S3Port = 27900
	// KarmadaNodePort and MinIONodePort are the host cluster's NodePorts.
	KarmadaNodePort = 32443
	MinIONodePort   = 30900
)

// ClusterNames lists the kind clusters of the lab: the host, then the members.
func ClusterNames(cfg *config.Config) []string {
	return append([]string{HostCluster}, cfg.MemberNames()...)
}

// NodeContainer is the Docker container of a cluster's single node; stopping it
// makes the cluster's API server unreachable (the lab's member failure).
func NodeContainer(cluster string) string { return cluster + "-control-plane" }

// ClusterConfig is the kind configuration of one lab cluster, built from kind's
// v1alpha4 API types. Every cluster has one node (control plane that also runs
// workloads) and an API server on 127.0.0.1; the host cluster maps Karmada's
// API server and MinIO's S3 API onto 127.0.0.1 as well.
//
// Every cluster's kubelet is told failCgroupV1: false: Kubernetes 1.35's
// kubelet refuses a cgroup v1 host otherwise (the setting does nothing on
// cgroup v2). A built node runs without kind's default CNI (its
// /etc/cni/net.d has the reference ptp plugin, enough for one node) and with
// the lab's etcd image tag.
func ClusterConfig(cfg *config.Config, name string, nodeImage Node) (*v1alpha4.Cluster, error) {
	port := int32(HostAPIServerPort)
	if name != HostCluster {
		m, err := cfg.Member(name)
		if err != nil {
			return nil, err
		}
		port = int32(MemberAPIServerBase + int(m))
	}
	node := v1alpha4.Node{
		Role:  v1alpha4.ControlPlaneRole,
		Image: nodeImage.Image,
		Labels: map[string]string{
			"lab.karmada.io/cluster": name,
		},
	}
	if name != HostCluster {
		// The Flink jobs' committed output, on the host machine at the same
		// path: it outlives the member, and the host reads it (lab flink verify).
		node.ExtraMounts = []v1alpha4.Mount{{HostPath: cfg.FlinkOutputDir(), ContainerPath: cfg.FlinkOutputDir()}}
	}
	if name == HostCluster {
		node.ExtraPortMappings = []v1alpha4.PortMapping{
			{ContainerPort: KarmadaNodePort, HostPort: KarmadaAPIServerPort, ListenAddress: config.Host, Protocol: v1alpha4.PortMappingProtocolTCP},
			{ContainerPort: MinIONodePort, HostPort: S3Port, ListenAddress: config.Host, Protocol: v1alpha4.PortMappingProtocolTCP},
		}
	}
	c := &v1alpha4.Cluster{
		TypeMeta: v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Name:     name,
		Nodes:    []v1alpha4.Node{node},
		Networking: v1alpha4.Networking{
			APIServerAddress: config.Host,
			APIServerPort:    port,
		},
		KubeadmConfigPatches: []string{"kind: KubeletConfiguration\nfailCgroupV1: false\n"},
	}
	if nodeImage.Built {
		c.Networking.DisableDefaultCNI = true
		if nodeImage.EtcdImageTag == "" {
			return nil, fmt.Errorf("built node image %s: no etcd image tag", nodeImage.Image)
		}
		c.KubeadmConfigPatches = append(c.KubeadmConfigPatches,
			"kind: ClusterConfiguration\netcd:\n  local:\n    imageTag: "+nodeImage.EtcdImageTag+"\n")
	}
	return c, nil
}

// WriteClusterConfigs writes each cluster's kind configuration to
// dir/<name>.yaml and returns the paths by cluster name.
func WriteClusterConfigs(cfg *config.Config, dir string, nodeImage Node) (map[string]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	paths := map[string]string{}
	for _, name := range ClusterNames(cfg) {
		c, err := ClusterConfig(cfg, name, nodeImage)
		if err != nil {
			return nil, err
		}
		b, err := yaml.Marshal(c)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, name+".yaml")
		header := []byte("# kind configuration of the lab's " + name + " cluster, generated by lab/kind from kind's v1alpha4 types.\n")
		if err := os.WriteFile(p, append(header, b...), 0o644); err != nil {
			return nil, err
		}
		paths[name] = p
	}
	return paths, nil
}
