package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/kubeconfig"
	"github.com/karmada-failover/lab/lab/internal/logtail"
	"github.com/karmada-failover/lab/lab/internal/pki"
	"github.com/karmada-failover/lab/lab/internal/poll"
	"github.com/karmada-failover/lab/lab/internal/proc"
)

// Members are kwokctl clusters with the binary runtime: kwokctl starts a real
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler per member
// from the binaries built by hack/build-lab-binaries.sh (it links them, it
// downloads nothing when every binary is given), plus kwok's controller, which
// stands in for the kubelets of fake nodes: it moves scheduled pods through
// the stages in the cluster's configuration.

// NotReadyLabel marks pods that the lab's chaos stage turns NotReady
// (lab/manifests/kwok/pod-not-ready.yaml).
const NotReadyLabel = "chaos.lab/not-ready"

// kwokctl runs the lab's kwokctl with the lab's work directory. A dead proxy
// keeps it hermetic: were it ever to try a download, it fails at once instead of
// reaching the internet. The lab's kubectl is first on its PATH: `kwokctl start
// cluster` looks kubectl up there (not in its configuration's kubectlBinary) and,
// without one, waits on for ever.
func (l *Lab) kwokctl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, l.Cfg.Bins.Kwokctl, args...)
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Dir(l.Cfg.Bins.Kubectl)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KWOK_WORKDIR="+l.Cfg.KwokDir(),
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost",
		"https_proxy=http://127.0.0.1:9", "http_proxy=http://127.0.0.1:9", "no_proxy=127.0.0.1,localhost",
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("kwokctl %s: %w\n%s", strings.Join(args, " "), err, logtail.Lines(out.String(), 15))
	}
	return out.String(), nil
}

func (l *Lab) memberDir(name string) string {
	return filepath.Join(l.Cfg.KwokDir(), "clusters", name)
}

// memberKubeconfig is the kubeconfig kwokctl writes for a member.
func (l *Lab) memberKubeconfig(name string) string {
	return filepath.Join(l.memberDir(name), "kubeconfig.yaml")
}

// memberConfig writes the kwokctl configuration of member m: the local
// binaries, loopback ports chosen by the lab (kwokctl's own picks race when
// clusters are created one after another), and the stages: kwok's defaults and
// the lab's (KwokStages).
func (l *Lab) memberConfig(m config.Member) (string, error) {
	b := l.Cfg.Bins
	p := l.Cfg.Ports.Member(m)
	var doc strings.Builder
	fmt.Fprintf(&doc, `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokctlConfiguration
options:
  runtime: binary
  bindAddress: %s
  kubeVersion: %s
  kubeApiserverPort: %d
  etcdPort: %d
  etcdPeerPort: %d
  kubeControllerManagerPort: %d
  kubeSchedulerPort: %d
  kwokControllerPort: %d
  kubeApiserverBinary: %s
  kubeControllerManagerBinary: %s
  kubeSchedulerBinary: %s
  kubectlBinary: %s
  etcdBinary: %s
  kwokControllerBinary: %s
`, config.Host, l.kubeVersion(), p.APIServer, p.Etcd, p.EtcdPeer, p.ControllerManager, p.Scheduler, p.KwokController,
		b.KubeAPIServer, b.KubeControllerManager, b.KubeScheduler, b.Kubectl, b.Etcd, b.Kwok)
	admission, err := l.memberAdmissionConfig(m)
	if err != nil {
		return "", err
	}
	// The binary runtime passes extraArgs to the process as they are.
	fmt.Fprintf(&doc, `componentsPatches:
  - name: kube-apiserver
    extraArgs:
      - key: admission-control-config-file
        value: %s
`, admission)
	stages, err := l.KwokStages()
	if err != nil {
		return "", err
	}
	doc.Write(stages)
	path := filepath.Join(l.Cfg.KwokDir(), m.Name()+".yaml")
	return path, os.WriteFile(path, []byte(doc.String()), 0o644)
}

// memberAdmissionConfig writes member m's kube-apiserver AdmissionConfiguration:
// its MutatingAdmissionWebhook plugin presents the lab's restore-webhook client
// certificate to the member's restore webhook (the kubeconfig user is keyed by
// the webhook URL's host:port), which accepts no other caller on /mutate.
// Returns the configuration's path.
func (l *Lab) memberAdmissionConfig(m config.Member) (string, error) {
	dir := l.Cfg.KwokDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := m.Name()
	crt, key := l.pki(pki.RestoreWebhookClient)
	kubeconfig := filepath.Join(dir, name+"-admission-webhooks.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
users:
  - name: %q
    user:
      client-certificate: %s
      client-key: %s
`, hostPort(l.Cfg.Ports.RestoreWebhookFor(m)), crt, key)), 0o600); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+"-admission.yaml")
	return path, os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: MutatingAdmissionWebhook
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: WebhookAdmissionConfiguration
      kubeConfigFile: %s
`, kubeconfig)), 0o644)
}

// KwokStages are the kwok Stage documents every member runs: kwok's defaults
// (node-initialize, heartbeat, pod-ready, pod-complete, pod-delete) and the
// lab's own (lab/manifests/kwok: chaos label, image pulls that fail, crashing
// containers, failing readiness probes), with the lab's image-pull rule
// rendered in. Each document starts with "---".
func (l *Lab) KwokStages() ([]byte, error) {
	defaults, err := filepath.Glob(filepath.Join(l.Cfg.Bins.KwokStages, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(defaults) == 0 {
		return nil, fmt.Errorf("no kwok default stages in %q (run `make lab-binaries`)", l.Cfg.Bins.KwokStages)
	}
	ours, err := filepath.Glob(filepath.Join(l.Cfg.Root, "lab", "manifests", "kwok", "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(defaults)
	sort.Strings(ours)
	var doc bytes.Buffer
	for _, f := range append(defaults, ours...) {
		s, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if s, err = renderStage(s, l.Cfg.ImagePull); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		doc.WriteString("---\n")
		doc.Write(s)
		if !bytes.HasSuffix(s, []byte("\n")) {
			doc.WriteString("\n")
		}
	}
	return doc.Bytes(), nil
}

// stagePlaceholder is where a stage file of the lab takes the image-pull rule:
// [[unpullable:jq]] a jq expression over the pod (selectors), [[unpullable:$v]]
// a Go template condition over the image in variable $v (status templates).
var stagePlaceholder = regexp.MustCompile(`\[\[unpullable:([^\]]*)\]\]`)

func renderStage(s []byte, rule config.ImagePullRule) ([]byte, error) {
	var bad error
	out := stagePlaceholder.ReplaceAllFunc(s, func(m []byte) []byte {
		arg := string(stagePlaceholder.FindSubmatch(m)[1])
		switch {
		case arg == "jq":
			return []byte(rule.PodJQ())
		case strings.HasPrefix(arg, "$") && !strings.ContainsAny(arg, " ()\"'"):
			return []byte(rule.TemplateCond(arg))
		}
		bad = fmt.Errorf("placeholder %q: want [[unpullable:jq]] or [[unpullable:$variable]]", m)
		return m
	})
	if bad != nil {
		return nil, bad
	}
	if i := bytes.Index(out, []byte("[[unpullable")); i >= 0 {
		return nil, fmt.Errorf("placeholder left after rendering: %.40s", out[i:])
	}
	return out, nil
}

// kubeVersion is the version of the Kubernetes binaries, taken from their
// folder name (kubernetes-<version>), which kwokctl records for the cluster.
func (l *Lab) kubeVersion() string {
	dir := filepath.Base(filepath.Dir(l.Cfg.Bins.KubeAPIServer))
	if v, ok := strings.CutPrefix(dir, "kubernetes-"); ok {
		return v
	}
	return "v1.35.8"
}

// createMember creates member m with kwokctl, waits until its API server is
// ready (kwokctl does not wait by default), creates its fake nodes and adds its
// context to members.config.
func (l *Lab) createMember(ctx context.Context, m config.Member) error {
	name := m.Name()
	cfgFile, err := l.memberConfig(m)
	if err != nil {
		return err
	}
	// --kubeconfig: kwokctl would otherwise edit ~/.kube/config.
	scratch := filepath.Join(l.Cfg.KwokDir(), "kwokctl-scratch.kubeconfig")
	if _, err := l.kwokctl(ctx, "create", "cluster", "--name", name, "--config", cfgFile, "--kubeconfig", scratch); err != nil {
		return err
	}
	if err := l.waitMemberAPI(ctx, name, 90*time.Second); err != nil {
		return err
	}
	if err := kubeconfig.MergeContext(l.Cfg.MembersKubeconfig(), l.memberKubeconfig(name), "kwok-"+name, name); err != nil {
		return fmt.Errorf("adding %s to %s: %w", name, l.Cfg.MembersKubeconfig(), err)
	}
	if err := l.startLink(ctx, name); err != nil {
		return err
	}
	return l.createNodes(ctx, name)
}

func (l *Lab) memberClient(name string) (*kubernetes.Clientset, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", l.memberKubeconfig(name))
	if err != nil {
		return nil, err
	}
	rc.Timeout = 5 * time.Second
	rc.Proxy = nil
	return kubernetes.NewForConfig(rc)
}

// waitMemberAPI waits until the member's kube-apiserver answers /readyz.
func (l *Lab) waitMemberAPI(ctx context.Context, name string, timeout time.Duration) error {
	cs, err := l.memberClient(name)
	if err != nil {
		return err
	}
	err = poll.Until(ctx, timeout, 250*time.Millisecond, name+" kube-apiserver /readyz", func(ctx context.Context) (bool, error) {
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("%w; logs in %s", err, filepath.Join(l.memberDir(name), "logs"))
	}
	return nil
}

// createNodes registers the member's fake nodes. kwok's node-initialize stage
// keeps the capacity given here and reports the nodes Ready; the heartbeat stage
// renews their leases, so kube-controller-manager never marks them NotReady.
func (l *Lab) createNodes(ctx context.Context, member string) error {
	cs, err := l.memberClient(member)
	if err != nil {
		return err
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("8"),
		corev1.ResourceMemory:           resource.MustParse("32Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	for n := 1; n <= l.Cfg.NodesPerMember; n++ {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        fmt.Sprintf("%s-node-%d", member, n),
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
				Labels: map[string]string{
					"type": "kwok", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
					"kubernetes.io/hostname":      fmt.Sprintf("%s-node-%d", member, n),
					"topology.kubernetes.io/zone": member + "-zone-" + strconv.Itoa((n-1)%2+1),
				},
			},
			Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating node %s in %s: %w", node.Name, member, err)
		}
	}
	return poll.Until(ctx, 60*time.Second, 250*time.Millisecond, member+" nodes Ready", func(ctx context.Context) (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, n := range nodes.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready >= l.Cfg.NodesPerMember, nil
	})
}

// joinMember registers the member with Karmada in Push mode, as a user would:
// karmadactl join with the lab's kubeconfigs. The member's kubeconfig names its
// link as the server, so the Cluster's apiEndpoint is the link.
func (l *Lab) joinMember(ctx context.Context, name string) error {
	memberConfig, err := l.karmadaMemberKubeconfig(name)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, l.Cfg.Bins.Karmadactl, "join", name,
		"--kubeconfig="+l.Cfg.KarmadaKubeconfig(), "--karmada-context="+config.KarmadaContext,
		"--cluster-kubeconfig="+memberConfig, "--cluster-context="+name)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("karmadactl join %s: %w\n%s", name, err, logtail.Lines(string(out), 15))
	}
	return nil
}

// waitNodesManaged waits until kwok's controller manages every fake node of a
// member again after a start: it renews each node's Lease (kwok's heartbeat
// stage), and only then runs the stages of the pods on that node. The API
// server answering is not enough: kwok's controller starts with the API server
// and may take minutes to pick its nodes up, during which new pods stay
// Pending, unlike on a cluster whose kubelets are back.
func (l *Lab) waitNodesManaged(ctx context.Context, name string, since time.Time) error {
	cs, err := l.memberClient(name)
	if err != nil {
		return err
	}
	// Lease renew times have microsecond precision; allow for clock rounding.
	since = since.Add(-time.Second)
	return poll.Until(ctx, 5*time.Minute, 500*time.Millisecond, name+" nodes managed by kwok again (Leases renewed)", func(ctx context.Context) (bool, error) {
		leases, err := cs.CoordinationV1().Leases("kube-node-lease").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		renewed := 0
		for _, le := range leases.Items {
			if le.Spec.RenewTime != nil && le.Spec.RenewTime.After(since) {
				renewed++
			}
		}
		return renewed >= l.Cfg.NodesPerMember, nil
	})
}

// memberPIDs reads the PIDs kwokctl recorded for a member's processes.
func (l *Lab) memberPIDs(name string) map[string]int {
	out := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(l.memberDir(name), "pids", "*.pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			out[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
		}
	}
	return out
}

// processAlive reports whether pid is a live process whose executable is one
// of the member's components (guards against recycled PIDs).
func processAlive(pid int) bool {
	names := []string{"kwok"}
	for _, k := range kwokProcesses {
		names = append(names, k.name)
	}
	return proc.Alive(pid, names...)
}

// ensureMemberStopped waits for the member's processes to exit after kwokctl
// signalled them and kills any that outlive grace, by the PIDs kwokctl recorded.
func ensureMemberStopped(pids map[string]int, grace time.Duration) []string {
	_ = poll.Until(context.Background(), grace, 100*time.Millisecond, "the member's processes to exit", func(context.Context) (bool, error) {
		for _, pid := range pids {
			if processAlive(pid) {
				return false, nil
			}
		}
		return true, nil
	})
	var killed []string
	for name, pid := range pids {
		if processAlive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, fmt.Sprintf("%s (pid %d)", name, pid))
		}
	}
	sort.Strings(killed)
	return killed
}

// waitPortsClosed waits until nothing listens on 127.0.0.1:lo..hi.
func waitPortsClosed(lo, hi int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var open []int
		for port := lo; port <= hi; port++ {
			if !proc.PortFree(config.Host, port) {
				open = append(open, port)
			}
		}
		if len(open) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Flink REST ports %v still open %s after the crash", open, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// deleteMember removes a member's processes and data.
func (l *Lab) deleteMember(ctx context.Context, name string) error {
	pids := l.memberPIDs(name)
	scratch := filepath.Join(l.Cfg.KwokDir(), "kwokctl-scratch.kubeconfig")
	_, err := l.kwokctl(ctx, "delete", "cluster", "--name", name, "--kubeconfig", scratch)
	if killed := ensureMemberStopped(pids, 15*time.Second); len(killed) > 0 {
		fmt.Fprintf(os.Stderr, "killed %s of %s after it ignored SIGTERM\n", strings.Join(killed, ", "), name)
	}
	return err
}
