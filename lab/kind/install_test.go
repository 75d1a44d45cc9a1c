package kind

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	initconfig "github.com/karmada-io/karmada/pkg/karmadactl/cmdinit/config"
	cmdinitk8s "github.com/karmada-io/karmada/pkg/karmadactl/cmdinit/kubernetes"

	"github.com/karmada-failover/lab/lab/config"
)

// TestKarmadaInitConfigPassesKarmadactl loads the generated karmadactl init
// configuration with karmadactl's own loader and validation (the code `karmadactl
// init --config` runs before it touches a cluster) and checks what each Karmada
// component would run with.
func TestKarmadaInitConfigPassesKarmadactl(t *testing.T) {
	for _, flavour := range []config.Flavour{config.FlavourPatched, config.FlavourUpstream} {
		t.Run(string(flavour), func(t *testing.T) {
			t.Setenv("LAB_KARMADA", string(flavour))
			cfg := testConfig(t)
			l, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "karmada-init.yaml")
			b, err := yaml.Marshal(KarmadaInitConfig(cfg, l.ImageTag, filepath.Join(dir, "host.kubeconfig"), filepath.Join(dir, "crds.tar.gz"), dir))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			var strict initconfig.KarmadaInitConfig
			if err := yaml.UnmarshalStrict(b, &strict); err != nil {
				t.Fatalf("strict decode: %v", err)
			}
			opts := &cmdinitk8s.CommandInitOption{KarmadaInitFilePath: path}
			if err := opts.Validate("karmadactl"); err != nil {
				t.Fatalf("karmadactl init would refuse the configuration: %v", err)
			}
			images := map[string]string{
				"karmada-controller-manager":   opts.KarmadaControllerManagerImage,
				"karmada-scheduler":            opts.KarmadaSchedulerImage,
				"karmada-webhook":              opts.KarmadaWebhookImage,
				"karmada-aggregated-apiserver": opts.KarmadaAggregatedAPIServerImage,
			}
			for c, got := range images {
				if got != l.KarmadaImage(c) {
					t.Errorf("%s image %q, want the lab's %q", c, got, l.KarmadaImage(c))
				}
			}
			wantGates := "--feature-gates=" + config.FeatureGatesFlag(config.FeatureGates(flavour, nil))
			for name, args := range map[string][]string{
				"karmada-controller-manager": opts.KarmadaControllerManagerExtraArgs,
				"karmada-scheduler":          opts.KarmadaSchedulerExtraArgs,
				"karmada-webhook":            opts.KarmadaWebhookExtraArgs,
			} {
				if !slices.Contains(args, wantGates) {
					t.Errorf("%s: no %s in %v", name, wantGates, args)
				}
			}
			for _, want := range config.Args(cfg.ControllerManagerFailoverFlags()) {
				if !slices.Contains(opts.KarmadaControllerManagerExtraArgs, want) {
					t.Errorf("karmada-controller-manager lacks %s: %v", want, opts.KarmadaControllerManagerExtraArgs)
				}
			}
			history := slices.ContainsFunc(opts.KarmadaControllerManagerExtraArgs, func(a string) bool { return strings.HasPrefix(a, "--failover-history-limit=") })
			if history != (flavour == config.FlavourPatched) {
				t.Errorf("--failover-history-limit present=%v for the %s build", history, flavour)
			}
			if !slices.Contains(opts.KarmadaWebhookExtraArgs, "--allow-no-execute-taint-policy=true") {
				t.Errorf("karmada-webhook lacks --allow-no-execute-taint-policy=true: %v", opts.KarmadaWebhookExtraArgs)
			}
			if opts.KarmadaAPIServerNodePort != KarmadaNodePort || opts.KarmadaAPIServerAdvertiseAddress != config.Host {
				t.Errorf("karmada-apiserver on %s:%d, want %s:%d", opts.KarmadaAPIServerAdvertiseAddress, opts.KarmadaAPIServerNodePort, config.Host, KarmadaNodePort)
			}
			if opts.KubeConfig != filepath.Join(dir, "host.kubeconfig") || opts.Context != "kind-"+HostCluster {
				t.Errorf("host cluster %s context %s, want the kind host cluster's kubeconfig", opts.KubeConfig, opts.Context)
			}
			if opts.EtcdStorageMode != "hostPath" || opts.EtcdReplicas != 1 || opts.ImagePullPolicy != "IfNotPresent" {
				t.Errorf("etcd %s ×%d, pull policy %s", opts.EtcdStorageMode, opts.EtcdReplicas, opts.ImagePullPolicy)
			}
			if opts.CRDs != filepath.Join(dir, "crds.tar.gz") {
				t.Errorf("CRDs from %q, want the tree's archive", opts.CRDs)
			}
		})
	}
}

// TestKarmadactlRefusesABadConfig shows that the check above can fail.
func TestKarmadactlRefusesABadConfig(t *testing.T) {
	cfg := testConfig(t)
	dir := t.TempDir()
	c := KarmadaInitConfig(cfg, "lab-patched", "host.kubeconfig", "crds.tar.gz", dir)
	c.Spec.Components.KarmadaControllerManager.ExtraArgs = append(c.Spec.Components.KarmadaControllerManager.ExtraArgs, initconfig.Arg{Value: "no-name"})
	b, _ := yaml.Marshal(c)
	path := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := (&cmdinitk8s.CommandInitOption{KarmadaInitFilePath: path}).Validate("karmadactl"); err == nil {
		t.Fatal("karmadactl accepted an extra argument without a name")
	}
}

// TestCRDArchiveLayout packs the patched tree's CRDs the way karmadactl init
// reads them: a crds/ folder with bases/ and patches/.
func TestCRDArchiveLayout(t *testing.T) {
	cfg := testConfig(t)
	l, _ := New(cfg)
	src := filepath.Join(l.karmadaTreeFor(), "charts", "karmada", "_crds")
	if _, err := os.Stat(src); err != nil {
		if os.Getenv("LAB_KIND_VERIFY") == "1" {
			t.Fatalf("the patched tree is missing: %v", err)
		}
		t.Skip("the patched tree is made by make patch / verify-series")
	}
	dst := filepath.Join(t.TempDir(), "crds.tar.gz")
	if err := CRDArchive(src, dst); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("tar", "-tzf", dst).Output()
	if err != nil {
		t.Fatal(err)
	}
	list := string(out)
	for _, want := range []string{"crds/bases/work/work.karmada.io_resourcebindings.yaml", "crds/kustomization.yaml", "crds/patches/"} {
		if !strings.Contains(list, want) {
			t.Errorf("%s is not in the archive:\n%s", want, list)
		}
	}
	// The patched tree's binding CRD has the new status field.
	rb, err := os.ReadFile(filepath.Join(src, "bases", "work", "work.karmada.io_resourcebindings.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rb), "failoverHistory") {
		t.Error("the patched tree's ResourceBinding CRD has no failoverHistory")
	}
}

func errOutput(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// imageRef matches an image reference with a tag or digest.
var imageRef = regexp.MustCompile(`^(?:[a-z0-9.-]+(?::\d+)?/)?[a-z0-9._/-]+(?::[A-Za-z0-9._-]+)?(?:@sha256:[0-9a-f]{64})?$`)

// TestImagesAndChartsArePinned checks every image the kind lab pulls and every
// chart it installs: an exact version, never latest or a range.
func TestImagesAndChartsArePinned(t *testing.T) {
	cfg := testConfig(t)
	var refs []string
	for name, b := range renderedManifests(t, cfg) {
		for _, m := range regexp.MustCompile(`(?m)^\s*(?:- )?image:\s*"?([^"\s]+)"?`).FindAllStringSubmatch(string(b), -1) {
			refs = append(refs, name+"|"+m[1])
		}
	}
	for _, f := range []string{"lab/kind/images/flink-job.Dockerfile", "restore/Dockerfile"} {
		b, err := os.ReadFile(filepath.Join(cfg.Root, f))
		if err != nil {
			t.Fatal(err)
		}
		args := map[string]string{}
		for _, m := range regexp.MustCompile(`(?m)^ARG (\w+)=(\S+)`).FindAllStringSubmatch(string(b), -1) {
			args[m[1]] = m[2]
		}
		for _, m := range regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(string(b), -1) {
			ref := regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllStringFunc(m[1], func(v string) string { return args[v[2:len(v)-1]] })
			refs = append(refs, f+"|"+ref)
		}
	}
	refs = append(refs, "clusters.go|"+NodeImage, "versions.go|"+MinIOImage)
	pom, err := os.ReadFile(filepath.Join(cfg.Root, "lab", "flink", "pom.xml"))
	if err != nil {
		t.Fatal(err)
	}
	dockerfile, _ := os.ReadFile(filepath.Join(cfg.Root, "lab", "kind", "images", "flink-job.Dockerfile"))
	flinkVersion := regexp.MustCompile(`<flink.version>([^<]+)</flink.version>`).FindSubmatch(pom)
	if flinkVersion == nil || !strings.Contains(string(dockerfile), "ARG FLINK_VERSION="+string(flinkVersion[1])+"\n") {
		t.Errorf("the Flink image's default FLINK_VERSION is not the job's Flink version from lab/flink/pom.xml")
	}
	if len(refs) < 6 {
		t.Fatalf("found only %d image references: %v", len(refs), refs)
	}
	for _, r := range refs {
		src, ref, _ := strings.Cut(r, "|")
		if strings.HasPrefix(ref, "failover-lab/") || ref == "scratch" {
			continue // built by the lab itself (tagged lab-<flavour>), or the empty image
		}
		repoTag := strings.Split(ref, "@")[0]
		tag := ""
		if i := strings.LastIndex(repoTag, ":"); i > strings.LastIndex(repoTag, "/") {
			tag = repoTag[i+1:]
		}
		if !imageRef.MatchString(ref) || tag == "" || tag == "latest" || !regexp.MustCompile(`\d`).MatchString(tag) {
			t.Errorf("%s: image %q is not pinned to a version", src, ref)
		}
	}
	for _, c := range []Chart{CertManager, FlinkOperator, Kyverno} {
		if !regexp.MustCompile(`^v?\d+\.\d+\.\d+$`).MatchString(c.Version) || !strings.HasPrefix(c.Repo, "https://") {
			t.Errorf("chart %s: version %q repo %q, want an exact version from an https repository", c.Name, c.Version, c.Repo)
		}
	}
	if !strings.Contains(FlinkOperator.Repo, FlinkOperator.Version) {
		t.Errorf("the operator's chart repository %s is not the one of release %s", FlinkOperator.Repo, FlinkOperator.Version)
	}
}

// TestImageBuildsLoadIntoKind: every image the lab builds itself is built with
// buildx --load and without provenance or SBOM attestations, which would make
// it an index that `kind load docker-image` cannot import from the containerd
// image store (Docker Desktop's default).
func TestImageBuildsLoadIntoKind(t *testing.T) {
	b, err := os.ReadFile("build-images.sh")
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	if regexp.MustCompile(`(?m)^\s*docker build\b`).MatchString(script) {
		t.Error("build-images.sh calls the legacy `docker build`")
	}
	m := regexp.MustCompile(`(?m)^build=\((.*)\)$`).FindStringSubmatch(script)
	if m == nil {
		t.Fatal("build-images.sh defines no build=(...) command")
	}
	for _, want := range []string{"docker buildx build", "--load", "--provenance=false", "--sbom=false"} {
		if !strings.Contains(m[1], want) {
			t.Errorf("the image build %q lacks %s", m[1], want)
		}
	}
	if n := strings.Count(script, `"${build[@]}"`); n != 2 {
		t.Errorf("%d image builds use build=(...), want 2 (flink-job, restore webhook)", n)
	}
}
