package kind

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/karmada-failover/lab/lab/internal/poll"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	initconfig "github.com/karmada-io/karmada/pkg/karmadactl/cmdinit/config"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
	"github.com/karmada-failover/lab/lab/internal/kubeconfig"
)

// KarmadaComponents are the images the lab builds from the tree; the chart's
// other images (kube-apiserver, etcd, kube-controller-manager, cfssl, kubectl)
// are upstream's pinned defaults.
var KarmadaComponents = []string{"karmada-controller-manager", "karmada-scheduler", "karmada-webhook", "karmada-aggregated-apiserver"}

// KarmadaImage is the reference upstream's image build gives a component.
func (l *Lab) KarmadaImage(component string) string {
	return "docker.io/karmada/" + component + ":" + l.ImageTag
}

// FlinkJobImage and RestoreWebhookImage are the lab's own images.
func (l *Lab) FlinkJobImage() string       { return "failover-lab/flink-job:" + l.ImageTag }
func (l *Lab) RestoreWebhookImage() string { return "failover-lab/flink-restore-webhook:" + l.ImageTag }

func (l *Lab) buildKarmadaImages(ctx context.Context) error {
	// One script builds all images; this step runs it, the next only checks.
	if l.images == ImagesBuild {
		// Static binaries imported, no base image and no registry (lab/kind/images).
		_, err := l.runIn(ctx, l.Cfg.Root, nil, "build-lab-images",
			filepath.Join(l.Cfg.Root, "lab", "kind", "images", "build-lab-images.sh"), string(l.Cfg.Karmada), l.ImageTag)
		return err
	}
	_, err := l.runIn(ctx, l.Cfg.Root, []string{"GOARCH=" + runtime.GOARCH}, "build-images",
		filepath.Join(l.Cfg.Root, "lab", "kind", "build-images.sh"), string(l.Cfg.Karmada), l.ImageTag)
	return err
}

// memberImages are the lab's images every member runs: the Flink job's (where
// images are pulled its base is Flink's official image, otherwise a JRE from
// Debian's packages), the restore webhook's, the e2e suite's workload and, where
// images are built, the FlinkDeployment runner's.
func (l *Lab) memberImages() []string {
	if l.images == ImagesBuild {
		return []string{l.FlinkJobImage(), l.RestoreWebhookImage(), lab.WorkloadImage, l.FlinkRunnerImage()}
	}
	return []string{l.FlinkJobImage(), l.RestoreWebhookImage(), lab.WorkloadImage}
}

// hostImages are the images the host cluster runs that kind does not pull:
// Karmada's, and SeaweedFS where the lab builds its images.
func (l *Lab) hostImages() []string {
	var imgs []string
	for _, c := range KarmadaComponents {
		imgs = append(imgs, l.KarmadaImage(c))
	}
	if l.images == ImagesBuild {
		imgs = append(imgs, l.SeaweedFSImage())
	}
	return imgs
}

func (l *Lab) buildLabImages(ctx context.Context) error {
	for _, img := range append(l.hostImages(), l.memberImages()...) {
		if _, err := l.run(ctx, "docker-image-inspect", "docker", "image", "inspect", "--format", "{{.Id}}", img); err != nil {
			return fmt.Errorf("image %s was not built: %w", img, err)
		}
	}
	return nil
}

func (l *Lab) loadImages(ctx context.Context) error {
	if err := l.kindLoad(ctx, HostCluster, l.hostImages()...); err != nil {
		return err
	}
	for _, m := range l.Cfg.MemberNames() {
		if err := l.kindLoad(ctx, m, l.memberImages()...); err != nil {
			return err
		}
	}
	return nil
}

// KarmadaInitConfig is the karmadactl init configuration of the lab (built
// from karmadactl's own config types): the images built from the tree, the
// tree's CRDs, the same feature gates and failover flags as the hermetic lab,
// and karmada-apiserver on NodePort KarmadaNodePort, which kind maps to
// 127.0.0.1 so the kubeconfig karmadactl writes works from the host.
func KarmadaInitConfig(cfg *config.Config, tag, hostKubeconfig, crds, dataDir string) *initconfig.KarmadaInitConfig {
	gates := []initconfig.Arg{{Name: "feature-gates", Value: config.FeatureGatesFlag(config.FeatureGates(cfg.Karmada, nil))}}
	settings := func(component string, extra ...initconfig.Arg) initconfig.CommonSettings {
		return initconfig.CommonSettings{
			Image:     initconfig.Image{Repository: "docker.io/karmada/" + component, Tag: tag},
			Replicas:  1,
			ExtraArgs: extra,
		}
	}
	var cmArgs []initconfig.Arg
	for _, a := range config.Args(cfg.ControllerManagerFailoverFlags()) {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		cmArgs = append(cmArgs, initconfig.Arg{Name: name, Value: value})
	}
	return &initconfig.KarmadaInitConfig{
		TypeMeta: metav1.TypeMeta{APIVersion: initconfig.SchemeGroupVersion.String(), Kind: "KarmadaInitConfig"},
		Spec: initconfig.KarmadaInitSpec{
			HostCluster: initconfig.HostCluster{Kubeconfig: hostKubeconfig, Context: "kind-" + HostCluster},
			// The lab's images are in the node (kind load); upstream's kube-apiserver,
			// kube-controller-manager and etcd images are pulled once.
			Images: initconfig.Images{ImagePullPolicy: corev1.PullIfNotPresent},
			Etcd: initconfig.Etcd{Local: &initconfig.LocalEtcd{
				CommonSettings: initconfig.CommonSettings{Replicas: 1},
				StorageMode:    "hostPath",
				DataPath:       "/var/lib/karmada-etcd",
			}},
			Components: initconfig.KarmadaComponents{
				KarmadaAPIServer: &initconfig.KarmadaAPIServer{
					AdvertiseAddress: config.Host,
					Networking:       initconfig.Networking{Namespace: "karmada-system", Port: KarmadaNodePort},
				},
				KarmadaControllerManager:   &initconfig.KarmadaControllerManager{CommonSettings: settings("karmada-controller-manager", append(gates, cmArgs...)...)},
				KarmadaScheduler:           &initconfig.KarmadaScheduler{CommonSettings: settings("karmada-scheduler", gates...)},
				KarmadaWebhook:             &initconfig.KarmadaWebhook{CommonSettings: settings("karmada-webhook", append(gates, WebhookExtraArgs...)...)},
				KarmadaAggregatedAPIServer: &initconfig.KarmadaAggregatedAPIServer{CommonSettings: settings("karmada-aggregated-apiserver")},
			},
			KarmadaCRDs:               crds,
			KarmadaDataPath:           dataDir,
			KarmadaPKIPath:            filepath.Join(dataDir, "pki"),
			WaitComponentReadyTimeout: 300,
		},
	}
}

// UseNodeControlPlaneImages points karmadactl init at the control-plane
// images a built node preloads (LAB_IMAGES=build): Karmada's kube-apiserver
// and kube-controller-manager at the node's Kubernetes version, and its etcd.
func UseNodeControlPlaneImages(c *initconfig.KarmadaInitConfig, n Node) {
	c.Spec.Images.KubeImageRegistry = "registry.k8s.io"
	c.Spec.Images.KubeImageTag = n.KubernetesVersion
	c.Spec.Etcd.Local.Image = initconfig.Image{Repository: "registry.k8s.io/etcd", Tag: n.EtcdImageTag}
}

// WebhookExtraArgs are karmada-webhook flags of the lab (as the hermetic lab
// passes them): NoExecute taints in ClusterTaintPolicy are allowed.
var WebhookExtraArgs = []initconfig.Arg{{Name: "allow-no-execute-taint-policy", Value: "true"}}

func (l *Lab) karmadaDataDir() string { return filepath.Join(l.Cfg.Dir, "karmada") }

// karmadaCRDArchive is the crds.tar.gz karmadactl init installs from. It sits
// outside karmadaDataDir (and its pki/): karmadactl init's Complete() empties
// KarmadaDataPath before it reads KarmadaCRDs.
func (l *Lab) karmadaCRDArchive() string {
	return filepath.Join(l.Cfg.Dir, "karmada-crds", "crds.tar.gz")
}

func (l *Lab) installKarmada(ctx context.Context) error {
	tree := l.karmadaTreeFor()
	crds := l.karmadaCRDArchive()
	if err := os.MkdirAll(filepath.Dir(crds), 0o755); err != nil {
		return err
	}
	if err := CRDArchive(filepath.Join(tree, "charts", "karmada", "_crds"), crds); err != nil {
		return err
	}
	initCfg := KarmadaInitConfig(l.Cfg, l.ImageTag, l.hostKubeconfig(), crds, l.karmadaDataDir())
	if l.node.Built {
		UseNodeControlPlaneImages(initCfg, l.node)
	}
	b, err := yaml.Marshal(initCfg)
	if err != nil {
		return err
	}
	initFile := filepath.Join(l.Cfg.ManifestDir(), "karmada-init.yaml")
	if err := os.MkdirAll(filepath.Dir(initFile), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(initFile, b, 0o644); err != nil {
		return err
	}
	// A second run finds Karmada installed: karmadactl init is not idempotent.
	missing := l.karmadaInstallMissing(ctx)
	if len(missing) == 0 {
		fmt.Fprintln(l.out, "   Karmada is installed")
		return nil
	}
	// A karmadactl init that failed part way left its namespace (and the
	// karmada-apiserver NodePort Service) behind, and every retry would stop at
	// "nodePort of karmada apiserver ... already exist": remove that partial
	// install with karmadactl's own deinit first.
	host, err := newKube(l.hostKubeconfig(), "")
	if err != nil {
		return err
	}
	if _, err := host.cs.CoreV1().Namespaces().Get(ctx, "karmada-system", metav1.GetOptions{}); err == nil {
		fmt.Fprintf(l.out, "   removing a partial Karmada install (karmadactl deinit) before karmadactl init: %s\n", strings.Join(missing, "; "))
		if _, err := l.run(ctx, "karmadactl-deinit", l.Cfg.Bins.Karmadactl, "deinit", "--force", "--purge-namespace",
			"--kubeconfig", l.hostKubeconfig(), "--context", "kind-"+HostCluster); err != nil {
			return fmt.Errorf("removing the partial Karmada install failed; run `%s deinit --force --purge-namespace --kubeconfig %s --context kind-%s`: %w",
				l.Cfg.Bins.Karmadactl, l.hostKubeconfig(), HostCluster, err)
		}
	}
	_, err = l.run(ctx, "karmadactl-init", l.Cfg.Bins.Karmadactl, "init", "--config", initFile)
	return err
}

// KarmadaInitWorkloads are the workloads karmadactl init (v1.18) creates in
// karmada-system of the host cluster.
var KarmadaInitWorkloads = map[string][]string{
	"Deployment": {"karmada-apiserver", "karmada-aggregated-apiserver", "kube-controller-manager",
		"karmada-scheduler", "karmada-controller-manager", "karmada-webhook"},
	"StatefulSet": {"etcd"},
}

// karmadaInstallMissing lists what a complete karmadactl init has and the host
// cluster lacks: its workloads, each with all replicas available; the
// kubeconfig it writes; Karmada's CRDs served by the Karmada API server. None
// means installed; anything else is a partial install.
func (l *Lab) karmadaInstallMissing(ctx context.Context) []string {
	out, err := l.karmadaSystemWorkloads(ctx)
	if err != nil {
		return []string{"karmada-system: " + err.Error()}
	}
	missing := MissingKarmadaWorkloads(out)
	written := filepath.Join(l.karmadaDataDir(), "karmada-apiserver.config")
	if _, err := os.Stat(written); err != nil {
		return append(missing, "the kubeconfig karmadactl init writes ("+written+")")
	}
	karmada, err := newKube(written, "")
	if err != nil {
		return append(missing, err.Error())
	}
	crdCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, crd := range []string{"clusters.cluster.karmada.io", "resourcebindings.work.karmada.io"} {
		if err := karmada.cs.Discovery().RESTClient().Get().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd).Do(crdCtx).Error(); err != nil {
			return append(missing, "Karmada's CRDs in the Karmada API server")
		}
	}
	return missing
}

// karmadaSystemWorkloads returns the Deployments and StatefulSets of karmada-system
// in the host cluster as one JSON list, each item with its kind.
func (l *Lab) karmadaSystemWorkloads(ctx context.Context) ([]byte, error) {
	host, err := newKube(l.hostKubeconfig(), "")
	if err != nil {
		return nil, err
	}
	deps, err := host.cs.AppsV1().Deployments("karmada-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	sts, err := host.cs.AppsV1().StatefulSets("karmada-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var items []any
	for _, d := range deps.Items {
		d.Kind = "Deployment"
		items = append(items, d)
	}
	for _, s := range sts.Items {
		s.Kind = "StatefulSet"
		items = append(items, s)
	}
	return json.Marshal(map[string]any{"items": items})
}

// MissingKarmadaWorkloads reads the Deployments and StatefulSets of karmada-system
// (a JSON list, each item with its kind) and lists the KarmadaInitWorkloads absent or not fully
// available.
func MissingKarmadaWorkloads(list []byte) []string {
	var l struct {
		Items []struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				Replicas *int32 `json:"replicas"`
			} `json:"spec"`
			Status struct {
				AvailableReplicas int32 `json:"availableReplicas"`
				ReadyReplicas     int32 `json:"readyReplicas"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(list, &l); err != nil {
		return []string{"karmada-system workloads: " + err.Error()}
	}
	var missing []string
	for _, kind := range []string{"Deployment", "StatefulSet"} {
		for _, name := range KarmadaInitWorkloads[kind] {
			found := false
			for _, it := range l.Items {
				if it.Kind != kind || it.Metadata.Name != name {
					continue
				}
				found = true
				want := int32(1)
				if it.Spec.Replicas != nil {
					want = *it.Spec.Replicas
				}
				got := it.Status.AvailableReplicas
				if kind == "StatefulSet" {
					got = it.Status.ReadyReplicas
				}
				if got < want {
					missing = append(missing, fmt.Sprintf("%s %s: %d/%d available", kind, name, got, want))
				}
			}
			if !found {
				missing = append(missing, fmt.Sprintf("%s %s", kind, name))
			}
		}
	}
	return missing
}

// CRDArchive packs a tree's charts/karmada/_crds as the crds.tar.gz karmadactl
// init takes (a top-level crds/ folder, as upstream's release archive and its
// init e2e environment make it).
func CRDArchive(src, dst string) error {
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	n := 0
	err = filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(filepath.Join("crds", rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = name
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		_, err = tw.Write(b)
		return err
	})
	if err == nil && n == 0 {
		err = fmt.Errorf("%s has no CRDs", src)
	}
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	return err
}

// karmadaTreeFor is the tree whose CRDs match the images: the series tree or
// the pristine upstream tree (hack/build.sh prepares both).
func (l *Lab) karmadaTreeFor() string {
	if l.Cfg.Karmada == config.FlavourUpstream {
		return filepath.Join(l.Cfg.Root, "_output", "upstream", "karmada")
	}
	return filepath.Join(l.Cfg.Root, "_output", "series", "karmada")
}

// writeKubeconfigs writes karmada.config (context karmada-apiserver from the
// kubeconfig karmadactl init wrote, and karmada-host) and members.config
// (member1..N), with the contexts of the hermetic lab.
func (l *Lab) writeKubeconfigs(ctx context.Context) error {
	written := filepath.Join(l.karmadaDataDir(), "karmada-apiserver.config")
	in, err := clientcmd.LoadFromFile(written)
	if err != nil {
		return fmt.Errorf("the kubeconfig karmadactl init writes: %w", err)
	}
	c, ok := in.Contexts[in.CurrentContext]
	if !ok {
		return fmt.Errorf("%s has no current context", written)
	}
	out := clientcmdapi.NewConfig()
	out.Clusters[config.KarmadaContext] = in.Clusters[c.Cluster]
	out.AuthInfos[config.KarmadaContext] = in.AuthInfos[c.AuthInfo]
	out.Contexts[config.KarmadaContext] = &clientcmdapi.Context{Cluster: config.KarmadaContext, AuthInfo: config.KarmadaContext}
	out.CurrentContext = config.KarmadaContext
	if err := clientcmd.WriteToFile(*out, l.Cfg.KarmadaKubeconfig()); err != nil {
		return err
	}
	if err := kubeconfig.MergeContext(l.Cfg.KarmadaKubeconfig(), l.hostKubeconfig(), "kind-"+HostCluster, "karmada-host"); err != nil {
		return fmt.Errorf("karmada-host context: %w", err)
	}
	_ = os.Remove(l.Cfg.MembersKubeconfig())
	for _, m := range l.Cfg.MemberNames() {
		if err := kubeconfig.MergeContext(l.Cfg.MembersKubeconfig(), l.kubeconfigOf(m), "kind-"+m, m); err != nil {
			return fmt.Errorf("%s context: %w", m, err)
		}
	}
	return l.waitAPI(ctx, l.Cfg.KarmadaKubeconfig(), 2*time.Minute)
}

// joinMembers joins each member in Push mode with karmadactl join, then points
// the Cluster's apiEndpoint at the node container's name on the kind network:
// karmada-controller-manager runs in a pod of the host cluster, where
// 127.0.0.1:<port> is not the member.
func (l *Lab) joinMembers(ctx context.Context) error {
	karmada, err := newKube(l.Cfg.KarmadaKubeconfig(), config.KarmadaContext)
	if err != nil {
		return err
	}
	clusters := karmada.dyn.Resource(clusterResource)
	for _, m := range l.Cfg.MemberNames() {
		if _, err := clusters.Get(ctx, m, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			if _, err := l.run(ctx, "join-"+m, l.Cfg.Bins.Karmadactl, "join", m,
				"--kubeconfig", l.Cfg.KarmadaKubeconfig(), "--karmada-context", config.KarmadaContext,
				"--cluster-kubeconfig", l.Cfg.MembersKubeconfig(), "--cluster-context", m); err != nil {
				return err
			}
		} else if err != nil {
			return fmt.Errorf("Cluster %s: %w", m, err)
		}
		endpoint := fmt.Sprintf(`{"spec":{"apiEndpoint":"https://%s:6443"}}`, NodeContainer(m))
		if _, err := clusters.Patch(ctx, m, types.MergePatchType, []byte(endpoint), metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
			return fmt.Errorf("Cluster %s: setting its apiEndpoint: %w", m, err)
		}
	}
	for _, m := range l.Cfg.MemberNames() {
		err := poll.Until(ctx, 3*time.Minute, 2*time.Second, "Cluster "+m+" Ready", func(ctx context.Context) (bool, error) {
			c, err := clusters.Get(ctx, m, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
			for _, cond := range conds {
				if m, ok := cond.(map[string]any); ok && m["type"] == "Ready" {
					if m["status"] == "True" {
						return true, nil
					}
					return false, fmt.Errorf("Ready=%v: %v", m["status"], m["message"])
				}
			}
			return false, errors.New("no Ready condition yet")
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// clusterResource is Karmada's Cluster.
var clusterResource = schema.GroupVersionResource{Group: "cluster.karmada.io", Version: "v1alpha1", Resource: "clusters"}

func (l *Lab) applyClusterTaintPolicy(ctx context.Context) error {
	karmada, err := newKube(l.Cfg.KarmadaKubeconfig(), config.KarmadaContext)
	if err != nil {
		return err
	}
	return karmada.applyFile(ctx, filepath.Join(l.Cfg.Root, "lab", "manifests", "karmada", "cluster-taint-policy.yaml"))
}
