package config

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// BinariesEnvFile is written by hack/build-lab-binaries.sh: one NAME=DIR line per
// tools module (KUBERNETES_BIN, ETCD_BIN, KWOK_BIN, ...), the version-keyed
// folders under _output/bin that hold the binaries.
const BinariesEnvFile = "_output/bin/lab-binaries.env"

// discoverBinaries finds each binary the way envtest finds its assets: an explicit
// variable first (LAB_BIN_KUBE_APISERVER=/path/to/kube-apiserver and so on),
// then the folders recorded by the build, then the build's default folders.
// Missing binaries are reported by Check, not here.
func discoverBinaries(root string, flavour Flavour) Binaries {
	return DiscoverBinaries(root, flavour)
}

// DiscoverBinaries finds the binaries of a lab running the given Karmada build
// (see discoverBinaries); the benchmarks switch builds with it.
func DiscoverBinaries(root string, flavour Flavour) Binaries {
	dirs := readEnvFile(filepath.Join(root, BinariesEnvFile))
	karmadaDir := filepath.Join(root, "_output", "bin", string(flavour))
	pick := func(name, dirKey string) string {
		key := "LAB_BIN_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		if v := os.Getenv(key); v != "" {
			return v
		}
		if dirKey == "" {
			return filepath.Join(karmadaDir, name)
		}
		if d := dirs[dirKey]; d != "" {
			return filepath.Join(d, name)
		}
		return ""
	}
	stages := os.Getenv("LAB_KWOK_STAGES")
	if stages == "" && dirs["KWOK_BIN"] != "" {
		stages = filepath.Join(dirs["KWOK_BIN"], "stages")
	}
	return Binaries{
		KwokStages:                 stages,
		SeaweedFS:                  pick("weed", "SEAWEEDFS_BIN"),
		FlinkRunner:                pickFile("LAB_BIN_FLINK_RUNNER", filepath.Join(root, "_output", "bin", "flink-runner")),
		Link:                       pickFile("LAB_BIN_LAB_LINK", filepath.Join(root, "_output", "bin", "lab-link")),
		Pod:                        pickFile("LAB_BIN_LAB_POD", filepath.Join(root, "_output", "bin", "lab-pod")),
		Kyverno:                    pick("kyverno", "KYVERNO_BIN"),
		FlinkJar:                   pickFile("LAB_FLINK_JAR", filepath.Join(root, "lab", "flink", "target", "failover-lab-flink-job.jar")),
		Java:                       lookJava(),
		Etcd:                       pick("etcd", "ETCD_BIN"),
		KubeAPIServer:              pick("kube-apiserver", "KUBERNETES_BIN"),
		KubeControllerManager:      pick("kube-controller-manager", "KUBERNETES_BIN"),
		KubeScheduler:              pick("kube-scheduler", "KUBERNETES_BIN"),
		Kubectl:                    pick("kubectl", "KUBERNETES_BIN"),
		Kwok:                       pick("kwok", "KWOK_BIN"),
		Kwokctl:                    pick("kwokctl", "KWOK_BIN"),
		KarmadaControllerManager:   pick("karmada-controller-manager", ""),
		KarmadaScheduler:           pick("karmada-scheduler", ""),
		KarmadaWebhook:             pick("karmada-webhook", ""),
		KarmadaAggregatedAPIServer: pick("karmada-aggregated-apiserver", ""),
		Karmadactl:                 pick("karmadactl", ""),
		Kind:                       pick("kind", "KIND_BIN"),
		Helm:                       pick("helm", "HELM_BIN"),
	}
}

// pickFile returns $key, else def if it exists, else "".
func pickFile(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	if _, err := os.Stat(def); err == nil {
		return def
	}
	return ""
}

// lookJava finds the JVM: LAB_JAVA, $JAVA_HOME/bin/java, then java on PATH.
func lookJava() string {
	if v := os.Getenv("LAB_JAVA"); v != "" {
		return v
	}
	if h := os.Getenv("JAVA_HOME"); h != "" {
		if _, err := os.Stat(filepath.Join(h, "bin", "java")); err == nil {
			return filepath.Join(h, "bin", "java")
		}
	}
	p, _ := exec.LookPath("java")
	return p
}

// Check reports every binary that is missing, with the command that builds it.
func (b Binaries) Check() error {
	var missing []string
	for name, path := range map[string]string{
		"etcd": b.Etcd, "kube-apiserver": b.KubeAPIServer, "kube-controller-manager": b.KubeControllerManager,
		"kube-scheduler": b.KubeScheduler, "kubectl": b.Kubectl, "kwok": b.Kwok, "kwokctl": b.Kwokctl,
		"karmada-controller-manager": b.KarmadaControllerManager, "karmada-scheduler": b.KarmadaScheduler,
		"karmada-webhook": b.KarmadaWebhook, "karmada-aggregated-apiserver": b.KarmadaAggregatedAPIServer,
		"karmadactl": b.Karmadactl, "lab-link": b.Link,
	} {
		if path == "" {
			missing = append(missing, name+" (not built yet)")
			continue
		}
		if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, name+" ("+path+")")
		}
	}
	if b.KwokStages == "" {
		missing = append(missing, "kwok default stages (not copied yet)")
	} else if _, err := os.Stat(filepath.Join(b.KwokStages, "pod-ready.yaml")); err != nil {
		missing = append(missing, "kwok default stages ("+b.KwokStages+")")
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return fmt.Errorf("missing binaries: %s; build them with `make build lab-binaries lab-cli` (LAB_KARMADA=upstream: `make build-upstream`)", strings.Join(missing, ", "))
}

func readEnvFile(path string) map[string]string {
	out := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}
