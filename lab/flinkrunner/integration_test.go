package flinkrunner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// crdFile is flink-kubernetes-operator 1.15.0's FlinkDeployment CRD.
// Go runs a package's tests in its folder: the repository root is two folders
// up, and shared/ (the team's fixtures) sits beside the repository.
const (
	repoRoot = "../.."
	crdFile  = repoRoot + "/../shared/fixtures/flink-kubernetes-operator-1.15.0/crds/flinkdeployments.flink.apache.org-v1.yml"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// TestIntegration runs the runner in-process against member1 of a running lab:
// FLINK_RUNNER_IT=1 go test ./lab/flinkrunner/ -run Integration -v
// (LAB_DIR defaults to the repository's _output/lab; FLINK_RUNNER_IT_CONTEXT to member1;
// FLINK_RUNNER_IT_CRD to the operator 1.15.0 CRD fixture).
func TestIntegration(t *testing.T) {
	if os.Getenv("FLINK_RUNNER_IT") != "1" {
		t.Skip("set FLINK_RUNNER_IT=1 (needs a running lab, java and lab/flink/target/failover-lab-flink-job.jar)")
	}
	labDir, _ := filepath.Abs(envOr("LAB_DIR", filepath.Join(repoRoot, "_output", "lab")))
	kubeContext := envOr("FLINK_RUNNER_IT_CONTEXT", "member1")
	jar, _ := filepath.Abs("../flink/target/failover-lab-flink-job.jar")
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("%v (build it: cd lab/flink && mvn -B -q package -DskipTests)", err)
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Fatal(err)
	}
	cfg, err := RESTConfig(filepath.Join(labDir, "members.config"), kubeContext)
	if err != nil {
		t.Fatalf("lab not up? %v", err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	installCRD(ctx, t, client, envOr("FLINK_RUNNER_IT_CRD", crdFile))

	tmp := t.TempDir()
	name := fmt.Sprintf("it-%d", time.Now().UnixNano()%1000000)
	ns := "default"
	key := ns + "/" + name
	fd := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "flink.apache.org/v1beta1",
		"kind":       "FlinkDeployment",
		"metadata":   map[string]interface{}{"name": name, "namespace": ns},
		"spec": map[string]interface{}{
			"flinkVersion": "v1_20",
			"flinkConfiguration": map[string]interface{}{
				"state.checkpoints.dir":                "file://" + filepath.Join(tmp, "ckpt"),
				"execution.checkpointing.num-retained": "2",
			},
			"job": map[string]interface{}{
				"jarURI":      "local://" + jar,
				"entryClass":  LabEntryClass,
				"args":        []interface{}{"--rate", "50", "--checkpoint-interval-ms", "2000"},
				"parallelism": int64(1),
				"upgradeMode": "stateless",
				"state":       "running",
			},
		},
	}}
	res := client.Resource(GVR).Namespace(ns)

	r, err := New(cfg, Options{
		Launch: LaunchConfig{DefaultJar: jar, JavaOpts: strings.Fields(os.Getenv("FLINK_RUNNER_IT_JAVA_OPTS"))},
		PortLo: 24700, PortHi: 24799, LogDir: filepath.Join(tmp, "logs"),
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stopRunner := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- r.Run(runCtx) }()
	defer func() { // stops every Flink process even when the test fails half-way
		stopRunner()
		<-runDone
		_ = res.Delete(context.Background(), name, metav1.DeleteOptions{})
	}()

	created := time.Now()
	if _, err := res.Create(ctx, fd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var jobID string
	var seen []string
	waitFor(ctx, t, 150*time.Second, "jobStatus.state=RUNNING", func() bool {
		obj, err := res.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		st, _, _ := unstructured.NestedString(obj.Object, "status", "jobStatus", "state")
		jm, _, _ := unstructured.NestedString(obj.Object, "status", "jobManagerDeploymentStatus")
		lc, _, _ := unstructured.NestedString(obj.Object, "status", "lifecycleState")
		jobID, _, _ = unstructured.NestedString(obj.Object, "status", "jobStatus", "jobId")
		if s := jm + "/" + lc + "/" + st; len(seen) == 0 || seen[len(seen)-1] != s {
			seen = append(seen, s)
			t.Logf("%6.1fs status %s jobId=%s", time.Since(created).Seconds(), s, jobID)
		}
		if msg, _, _ := unstructured.NestedString(obj.Object, "status", "error"); msg != "" {
			t.Fatalf("status.error: %s", msg)
		}
		return st == JobRunning && jobID != "" && jm == JMReady && lc == LifecycleStable
	})
	toRunning := time.Since(created)
	pid, err := r.PID(key)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("RUNNING after %.1fs (create -> status written), jobId=%s, pid=%d", toRunning.Seconds(), jobID, pid)

	// The pinned job id is Flink's: its checkpoints land under <dir>/<jobId>/chk-N.
	waitFor(ctx, t, 30*time.Second, "a completed checkpoint", func() bool {
		m, _ := filepath.Glob(filepath.Join(tmp, "ckpt", jobID, "chk-*", "_metadata"))
		return len(m) > 0
	})
	t.Logf("RSS of the Flink JVM: %s", rss(pid))

	deleted := time.Now()
	if err := res.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, 40*time.Second, "the Java process to exit", func() bool { return !pidAlive(pid) })
	t.Logf("Java process %d gone %.1fs after delete", pid, time.Since(deleted).Seconds())
	if m, _ := filepath.Glob(filepath.Join(tmp, "ckpt", jobID, "chk-*", "_metadata")); len(m) == 0 {
		t.Errorf("no retained checkpoint after delete")
	}
	if len(r.Processes()) != 0 {
		t.Errorf("processes left: %+v", r.Processes())
	}
	if b, _ := os.ReadFile(filepath.Join(tmp, "logs", ns+"_"+name+".log")); !bytes.Contains(b, []byte("JOB_SUBMITTED")) {
		t.Errorf("log file lacks JOB_SUBMITTED")
	}
}

func installCRD(ctx context.Context, t *testing.T, client dynamic.Interface, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := crd.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	waitFor(ctx, t, 60*time.Second, "the CRD to be served", func() bool {
		_, err := client.Resource(GVR).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil
	})
}

func waitFor(ctx context.Context, t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func pidAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return !(i > 0 && i+2 < len(stat) && stat[i+2] == 'Z')
}

func rss(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			return strings.TrimSpace(strings.TrimPrefix(l, "VmRSS:"))
		}
	}
	return "?"
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
