// Package kind is the kind lab provider (LAB_PROVIDER=kind), for machines with
// a Docker engine: the host cluster runs Karmada from the patched tree
// (karmadactl init) and the checkpoint store (SeaweedFS where the lab builds its
// images, MinIO where they are pulled); every member runs the restore webhook (or
// Kyverno with the checkpoint locator) and, to run Flink jobs, the lab's
// FlinkDeployment runner with each job in a pod (images built, flink.go) or
// cert-manager and flink-kubernetes-operator (images pulled). It writes the same
// kubeconfig files and contexts as the hermetic lab (karmada.config with
// karmada-apiserver and karmada-host, members.config with member1..N), so the
// e2e suite runs against either.
//
// Versions are pinned in versions.go and clusters.go; the kind, helm and
// kubectl binaries are built from Go modules (hack/build-kind-tools.sh).
package kind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/logtail"
	"github.com/karmada-failover/lab/lab/internal/poll"
	"github.com/karmada-failover/lab/lab/internal/steps"
	"github.com/karmada-failover/lab/lab/kind/engine"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Lab is a kind lab.
type Lab struct {
	Cfg *config.Config
	// restore is how members restore a failed-over FlinkDeployment: the
	// restore webhook (default) or Kyverno calling the webhook's /locate
	// (LAB_RESTORE for a lab about to come up; Restore reads a running lab's).
	restore string
	// ImageTag tags the images the lab builds (Karmada, Flink job, webhook).
	ImageTag string
	out      io.Writer
	// engine is the Docker engine every docker and kind command of the lab
	// runs against (DOCKER_HOST); nil until first needed.
	engine *engine.Engine
	// images is LAB_IMAGES resolved (build or pull), node the clusters' node image.
	images string
	node   Node
	// planned: a lab-up runs in this process (Plan), so engine is the one it had.
	planned bool
}

// New returns the kind lab of cfg; LAB_RESTORE picks the restore mode.
func New(cfg *config.Config) (*Lab, error) {
	l := &Lab{Cfg: cfg, restore: config.RestoreWebhook, ImageTag: "lab-" + string(cfg.Karmada), out: io.Discard}
	if cfg.Restore != "" {
		l.restore = cfg.Restore
	}
	if err := config.CheckRestore(l.restore); err != nil {
		return nil, fmt.Errorf("LAB_RESTORE: %w", err)
	}
	return l, nil
}

func (l *Lab) kindDir() string        { return filepath.Join(l.Cfg.Dir, "kind") }
func (l *Lab) hostKubeconfig() string { return filepath.Join(l.kindDir(), HostCluster+".kubeconfig") }
func (l *Lab) kubeconfigOf(c string) string {
	return filepath.Join(l.kindDir(), c+".kubeconfig")
}

// Plan returns the kind lab's steps. Each is idempotent, so a second lab-up after
// a failure (LAB_RETAIN=1) continues where the first stopped. lab.ErrAlreadyUp
// when the lab's record says it is up and its host cluster's node exists.
func (l *Lab) Plan(_ context.Context, out io.Writer) (*lab.Plan, error) {
	l.out = out
	if st, err := lab.ReadState(l.Cfg); err == nil && st.Ready && l.Running() {
		return nil, lab.ErrAlreadyUp
	}
	if err := os.MkdirAll(l.Cfg.LogDir(), 0o755); err != nil {
		return nil, err
	}
	if !l.Running() {
		if err := lab.BusyPorts(l.clusterComponents()); err != nil {
			return nil, err
		}
	}
	l.planned = true
	members := l.Cfg.MemberNames()
	st := lab.NewState(l.Cfg)
	st.Restore = l.restore
	st.Logs = []string{l.Cfg.LogDir()}
	list := []steps.Step{
		{Name: "Docker engine (LAB_DOCKER=" + l.Cfg.Docker + ")", Run: func(ctx context.Context) error {
			err := l.startEngine(ctx)
			if l.engine != nil {
				st.DockerHost, st.OwnDocker = l.engine.Host, l.engine.Own
			}
			return err
		}},
		{Name: "images (LAB_IMAGES=" + l.Cfg.Images + ")", Run: l.resolveImages},
		{Name: "preflight: free space, make, Java, Maven, inotify limits", Run: l.preflight},
		{Name: "kind node image", Run: l.nodeImage},
		{Name: "kind clusters (" + HostCluster + ", " + strings.Join(members, ", ") + ")", Run: l.createClusters},
		{Name: "Karmada and lab images from the " + string(l.Cfg.Karmada) + " tree (built: build-lab-images.sh; pulled: upstream's make image-*)", Run: l.buildKarmadaImages},
		{Name: "lab images present (restore webhook, Flink job image; SeaweedFS and the FlinkDeployment runner when built)", Run: l.buildLabImages},
		{Name: "kind load docker-image", Run: l.loadImages},
		{Name: "Karmada on " + HostCluster + " (karmadactl init, the tree's CRDs)", Run: l.installKarmada},
		{Name: "kubeconfigs (karmada.config, members.config)", Run: l.writeKubeconfigs},
		{Name: "karmadactl join", Run: l.joinMembers},
		{Name: "ClusterTaintPolicy", Run: l.applyClusterTaintPolicy},
		{Name: "checkpoint store (MinIO pulled, or SeaweedFS built) and bucket", Run: l.installCheckpointStore},
		{Name: "cert-manager and flink-kubernetes-operator on the members", Run: l.installOperators},
		{Name: "restore webhook on the members", Run: l.installRestore},
		{Name: "Flink on the members (built: the FlinkDeployment CRD and the lab's runner, jobs in pods)", Run: l.installFlink},
		{Name: "Kyverno on the members (LAB_RESTORE=kyverno: built from its module, or its chart's images pulled)", Run: l.upKyverno},
	}
	recorded := func(st *lab.State) {
		st.Components = l.components(context.Background())
		st.Images = l.images
		if l.flinkRuns() {
			st.FlinkRunner, st.FlinkOutputDir = true, l.Cfg.FlinkOutputDir()
		}
	}
	return &lab.Plan{State: st, Steps: list, Recorded: recorded}, nil
}

func (l *Lab) writeState(st *lab.State) error { return lab.WriteState(l.Cfg, st) }

// Name is the provider: the kind lab.
func (l *Lab) Name() config.Provider { return config.ProviderKind }

// Config is the lab's configuration.
func (l *Lab) Config() *config.Config { return l.Cfg }

// State reads the lab's record.
func (l *Lab) State() (*lab.State, error) { return lab.ReadState(l.Cfg) }

var _ lab.Provider = (*Lab)(nil)

// Info: the kind lab's faults but for the Flink runner's where the real operator runs
// (images pulled); no Karmada build switched in place (its images are loaded into kind).
func (l *Lab) Info() lab.Info {
	info := lab.Info{FlinkRunner: l.flinkRunsRecorded()}
	if !info.FlinkRunner {
		info.Unsupported = map[lab.Fault]string{
			lab.FaultStarveFlink:   "with images pulled the kind lab runs the flink-kubernetes-operator, whose task slots the lab does not take away",
			lab.FaultRestartRunner: "with images pulled the kind lab runs the flink-kubernetes-operator, not the lab's FlinkDeployment runner",
		}
	}
	return info
}

// Running reports whether the lab's host cluster's node container exists.
func (l *Lab) Running() bool {
	have, err := l.existingClusters(context.Background())
	return err == nil && have[HostCluster]
}

// SwitchKarmada is what only the hermetic lab does (lab.Info.Builds).
func (l *Lab) SwitchKarmada(context.Context, config.Flavour) error {
	return fmt.Errorf("switching the Karmada build in place on the kind lab: %w: its images are loaded into the kind clusters; LAB_KARMADA=upstream make lab-up brings a lab of the other build up", lab.ErrUnsupported)
}

// ProcessPID: the kind lab's processes run in containers, not on this host (lab.Info.Builds).
func (l *Lab) ProcessPID(string) (int, bool) { return 0, false }

// CollectLogs exports every kind cluster's logs (`kind export logs`: the node's journal,
// containerd and every pod's containers) into dst/<cluster>, and copies the lab's own
// command logs into dst/lab.
func (l *Lab) CollectLogs(ctx context.Context, dst string) error {
	errs := []error{lab.CopyLogs(l.Cfg.LogDir(), filepath.Join(dst, "lab"))}
	for _, c := range ClusterNames(l.Cfg) {
		if err := l.kindCollectLogs(c, filepath.Join(dst, c)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (l *Lab) preflight(ctx context.Context) error {
	// Node containers, their images and the lab's own dockerd's data root all live under _output.
	if err := lab.CheckFreeSpace(l.Cfg.Dir, 6*lab.GiB); err != nil {
		return err
	}
	return Preflight(ctx, l.Cfg.Root, append(l.dockerEngine().Env(), "LAB_IMAGES="+l.images)...)
}

// startEngine chooses the Docker engine (lab/kind/engine) and, when it is the
// lab's own dockerd, starts it.
func (l *Lab) startEngine(ctx context.Context) error {
	o := EngineOptions(l.Cfg)
	e, err := engine.Choose(ctx, o)
	if err != nil {
		return err
	}
	if e.Own {
		why := e.Reason
		if e, err = engine.Start(ctx, o); err != nil {
			return err
		}
		e.Reason = why
	}
	l.engine = &e
	fmt.Fprintf(l.out, "   %s\n", e)
	return nil
}

// dockerEngine is the engine the lab's commands use: the one Up chose, or the
// one the lab's record names, or the lab's own dockerd when it runs.
func (l *Lab) dockerEngine() engine.Engine {
	if l.engine == nil {
		o := EngineOptions(l.Cfg)
		e := engine.Current(o)
		if st, err := l.State(); err == nil && st.OwnDocker && !e.Own {
			e = engine.Engine{Host: o.Host(), Own: true, Reason: "the lab's record names its own dockerd, which is not running"}
		}
		l.engine = &e
	}
	return *l.engine
}

// Preflight runs lab/kind/preflight.sh alone (Docker engine and host tools)
// with env added to its environment (the engine's DOCKER_HOST); its error
// names what is missing.
func Preflight(ctx context.Context, root string, env ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "lab", "kind", "preflight.sh"))
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return errors.New(strings.TrimPrefix(msg, "ERROR: "))
		}
		return err
	}
	return nil
}

func (l *Lab) existingClusters(context.Context) (map[string]bool, error) {
	return l.kindClusters()
}

func (l *Lab) resolveImages(ctx context.Context) error {
	mode, why, err := ResolveImages(ctx, l.Cfg.Images, nil)
	if err != nil {
		return err
	}
	l.images = mode
	fmt.Fprintf(l.out, "   %s: %s\n", mode, why)
	return nil
}

// nodeImage builds the node image (LAB_IMAGES=build) or names kind's default.
func (l *Lab) nodeImage(ctx context.Context) error {
	if l.images != ImagesBuild {
		l.node = PulledNode
		fmt.Fprintf(l.out, "   %s (pulled by kind)\n", l.node.Image)
		return nil
	}
	n, err := l.buildNodeImage(ctx)
	if err != nil {
		return err
	}
	l.node = n
	fmt.Fprintf(l.out, "   %s (built here; etcd %s)\n", n.Image, n.EtcdImageTag)
	return nil
}

func (l *Lab) createClusters(ctx context.Context) error {
	// Mounted into every member node (the Flink jobs' committed output).
	if err := os.MkdirAll(l.Cfg.FlinkOutputDir(), 0o755); err != nil {
		return err
	}
	paths, err := WriteClusterConfigs(l.Cfg, l.kindDir(), l.node)
	if err != nil {
		return err
	}
	have, err := l.existingClusters(ctx)
	if err != nil {
		return err
	}
	for _, name := range ClusterNames(l.Cfg) {
		if have[name] {
			fmt.Fprintf(l.out, "   %s exists\n", name)
		} else if err := l.kindCreate(name, paths[name], 3*time.Minute); err != nil {
			return err
		}
		// The file kind writes for an existing cluster may be gone (lab clean); export it again.
		if err := l.kindExportKubeconfig(name); err != nil {
			return err
		}
	}
	return nil
}

// KindNetwork is the Docker network kind puts every node container on.
const KindNetwork = "kind"

// PartitionChain is the iptables chain in a member's node that drops its
// traffic with the host cluster while partitioned.
const PartitionChain = "LAB-PARTITION"

// MemberAPIServerPort is the port of a member's API server in its node, where
// Karmada reaches it (each Cluster's apiEndpoint, https://<node>:6443).
const MemberAPIServerPort = 6443

// PartitionScript is what Partition runs in the member's node: with heal, the
// chain is unhooked and removed; otherwise the member's API server drops every
// packet from and to the host cluster's node (Karmada's pods reach the member
// masqueraded to that address), in and out, while both keep running: Karmada's
// requests hang rather than being refused, as across a real partition. The
// member's workloads keep every other path, the checkpoint store's included
// (on the host cluster's node in the kind lab, as a store outside both sides
// of the cut would be).
func PartitionScript(hostIP string, heal bool) string {
	unhook := "for c in INPUT OUTPUT FORWARD; do while iptables -D $c -j " + PartitionChain + " 2>/dev/null; do :; done; done; " +
		"iptables -F " + PartitionChain + " 2>/dev/null; iptables -X " + PartitionChain + " 2>/dev/null; true"
	if heal {
		return unhook
	}
	port := fmt.Sprint(MemberAPIServerPort)
	return unhook + "; iptables -N " + PartitionChain +
		" && iptables -A " + PartitionChain + " -s " + hostIP + " -p tcp --dport " + port + " -j DROP" +
		" && iptables -A " + PartitionChain + " -d " + hostIP + " -p tcp --sport " + port + " -j DROP" +
		" && for c in INPUT OUTPUT; do iptables -I $c -j " + PartitionChain + " || exit 1; done"
}

// Partition cuts Karmada (in the host cluster) off the member while both keep
// running: the member's node drops the traffic between the host cluster's node
// and its API server (PartitionScript); heal lets it through again. The
// member's workloads go on, and the host machine still reaches the member's API
// server through its published port.
func (l *Lab) Partition(ctx context.Context, name string, heal bool) error {
	if _, err := l.Cfg.Member(name); err != nil {
		return err
	}
	hostIP, err := l.nodeIP(ctx, HostCluster)
	if err != nil {
		return err
	}
	verb := "partition"
	if heal {
		verb = "heal"
	}
	_, err = l.run(ctx, "docker-exec-"+verb+"-"+name, "docker", "exec", "--privileged", NodeContainer(name), "sh", "-c", PartitionScript(hostIP, heal))
	return err
}

// nodeIP is a cluster's node address on the kind network.
func (l *Lab) nodeIP(ctx context.Context, cluster string) (string, error) {
	out, err := l.run(ctx, "node-ip-"+cluster, "docker", "inspect", "-f", `{{with index .NetworkSettings.Networks "`+KindNetwork+`"}}{{.IPAddress}}{{end}}`, NodeContainer(cluster))
	if err != nil {
		return "", err
	}
	ip := strings.TrimSpace(out)
	if ip == "" {
		return "", fmt.Errorf("%s has no address on the %s network", NodeContainer(cluster), KindNetwork)
	}
	return ip, nil
}

func (l *Lab) waitAPI(ctx context.Context, kubeconfig string, timeout time.Duration) error {
	return poll.Until(ctx, timeout, 2*time.Second, "the API server of "+filepath.Base(kubeconfig), func(ctx context.Context) (bool, error) {
		k, err := newKube(kubeconfig, "")
		if err != nil {
			return false, err
		}
		err = k.readyz(ctx)
		return err == nil, err
	})
}

// TearDown deletes the lab's kind clusters (MinIO and every workload go with
// them) and kind's network, then stops the lab's own dockerd if it runs; the
// generated files stay in the lab folder, the images the lab built in the
// dockerd's data root.
func (l *Lab) TearDown(ctx context.Context, out io.Writer) error {
	l.out = out
	if l.planned && l.engine == nil {
		// A lab-up in this process that never had a Docker engine made nothing.
		return nil
	}
	e := l.dockerEngine()
	if e.Own {
		// The lab's containers live in its dockerd's data root: start it to delete them.
		if _, running := engine.Running(EngineOptions(l.Cfg)); !running {
			if _, err := engine.Start(ctx, EngineOptions(l.Cfg)); err != nil {
				return err
			}
		}
	}
	have, err := l.existingClusters(ctx)
	if err != nil {
		return err
	}
	for _, name := range ClusterNames(l.Cfg) {
		if !have[name] {
			continue
		}
		fmt.Fprintf(out, " • kind delete cluster --name %s\n", name)
		if err := l.kindDelete(name); err != nil {
			return err
		}
	}
	// kind leaves its network behind; the lab removes it once no container is on it.
	if attached, err := l.run(ctx, "docker-network-inspect", "docker", "network", "inspect", "-f", "{{len .Containers}}", KindNetwork); err == nil && strings.TrimSpace(attached) == "0" {
		fmt.Fprintf(out, " • docker network rm %s\n", KindNetwork)
		if _, err := l.run(ctx, "docker-network-rm", "docker", "network", "rm", KindNetwork); err != nil {
			return err
		}
	}
	if e.Own {
		pid, _ := engine.Running(EngineOptions(l.Cfg))
		fmt.Fprintf(out, " • the lab's dockerd (pid %d): stop\n", pid)
		if err := engine.Stop(ctx, EngineOptions(l.Cfg)); err != nil {
			return err
		}
	}
	return nil
}

// Status goes over the record: each cluster's node container and API server, and each
// Deployment's and StatefulSet's ready replicas.
func (l *Lab) Status(ctx context.Context) ([]lab.ComponentStatus, error) {
	var rows []lab.ComponentStatus
	kubes := map[string]*kube{}
	for _, c := range l.recorded(ctx) {
		row := lab.ComponentStatus{Component: c.Name, Address: c.Address, Healthy: true}
		if c.Kind == lab.KindCluster {
			row.Component = c.Name + " (" + NodeContainer(c.Name) + ")"
			running, _ := l.run(ctx, "docker-inspect", "docker", "inspect", "-f", "{{.State.Running}}", NodeContainer(c.Name))
			switch strings.TrimSpace(running) {
			case "true":
			case "":
				row.Healthy, row.Detail = false, "container absent"
			default:
				row.Healthy, row.Detail = false, "container not running"
			}
			if k, err := l.kubeOn(c.Name); err != nil || k.readyz(ctx) != nil {
				row.Healthy = false
				row.Detail = strings.TrimSpace(row.Detail + " API server unreachable")
			} else {
				kubes[c.Name] = k
			}
			rows = append(rows, row)
			continue
		}
		row.Address = c.Cluster + ": " + c.Namespace + "/" + processName(c)
		k := kubes[c.Cluster]
		if k == nil {
			row.Healthy, row.Detail = false, "its cluster is unreachable"
			rows = append(rows, row)
			continue
		}
		var want, ready int32
		switch c.Kind {
		case lab.KindDeployment:
			d, err := k.cs.AppsV1().Deployments(c.Namespace).Get(ctx, processName(c), metav1.GetOptions{})
			if err != nil {
				row.Healthy, row.Detail = false, err.Error()
				break
			}
			want, ready = ptr.Deref(d.Spec.Replicas, 1), d.Status.AvailableReplicas
		case lab.KindStatefulSet:
			s, err := k.cs.AppsV1().StatefulSets(c.Namespace).Get(ctx, processName(c), metav1.GetOptions{})
			if err != nil {
				row.Healthy, row.Detail = false, err.Error()
				break
			}
			want, ready = ptr.Deref(s.Spec.Replicas, 1), s.Status.ReadyReplicas
		}
		if row.Detail == "" {
			row.Detail = fmt.Sprintf("%d/%d ready", ready, want)
			row.Healthy = want > 0 && ready == want
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Env prints the same exports as the hermetic lab's.
func (l *Lab) Env() []string {
	return lab.Env(l.Cfg, l.Cfg.Bins.Kubectl, l.Cfg.Bins.Karmadactl, l.Cfg.Bins.Kind, l.Cfg.Bins.Helm)
}

// run runs a command with its output in logs/kind-<name>.log and returns its
// stdout; on failure the error carries the command and the log's last lines.
func (l *Lab) run(ctx context.Context, name, bin string, args ...string) (string, error) {
	return l.runIn(ctx, "", nil, name, bin, args...)
}

func (l *Lab) runIn(ctx context.Context, dir string, env []string, name, bin string, args ...string) (string, error) {
	if bin == "" {
		return "", fmt.Errorf("%s: binary not found; run hack/build-kind-tools.sh (make lab-up does)", name)
	}
	logPath := filepath.Join(l.Cfg.LogDir(), "kind-"+name+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return "", err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return "", err
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "$ %s %s\n", bin, strings.Join(args, " "))
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), l.dockerEngine().Env()...), env...)
	cmd.Stdout = io.MultiWriter(&stdout, logFile)
	cmd.Stderr = logFile
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, logtail.Indent(logtail.File(logPath, 15), "  "))
	}
	return stdout.String(), nil
}
