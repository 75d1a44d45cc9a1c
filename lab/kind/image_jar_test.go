package kind

import (
	"archive/zip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The job image carries the thin job jar: on the operator's classpath Flink,
// Kryo and the logging libraries come from the image's lib/, and s3:// from
// Flink's plugin, so the jar holds the job and the datagen connector only.
func TestFlinkJobImageCarriesTheThinJar(t *testing.T) {
	root := filepath.Join("..", "..")
	dockerfile, err := os.ReadFile(filepath.Join(root, "lab", "kind", "images", "flink-job.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^COPY .*\bfailover-lab-flink-job-thin\.jar /opt/flink/usrlib/failover-lab-flink-job\.jar$`).Match(dockerfile) {
		t.Error("flink-job.Dockerfile does not copy the thin jar to /opt/flink/usrlib/failover-lab-flink-job.jar")
	}
	jar := filepath.Join(root, "lab", "flink", "target", "failover-lab-flink-job-thin.jar")
	z, err := zip.OpenReader(jar)
	if os.IsNotExist(err) {
		if os.Getenv("LAB_KIND_VERIFY") == "1" {
			t.Fatalf("%s is missing: run make flink-job", jar)
		}
		t.Skipf("%s is missing: run make flink-job", jar)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	job := false
	for _, f := range z.File {
		n := f.Name
		switch {
		case n == "io/karmadafailover/lab/flink/FailoverLabJob.class":
			job = true
		case strings.HasPrefix(n, "io/karmadafailover/lab/flink/LocalRunner"), strings.HasPrefix(n, "io/karmadafailover/lab/flink/s3/"):
			t.Errorf("%s: the hermetic lab's stand-ins do not belong in the image", n)
		case n == "META-INF/services/org.apache.flink.core.fs.FileSystemFactory":
			t.Errorf("%s: s3:// comes from the image's Flink plugin", n)
		case strings.HasSuffix(n, ".class") && !strings.HasPrefix(n, "io/karmadafailover/") && !strings.HasPrefix(n, "org/apache/flink/connector/datagen/"):
			t.Errorf("%s: a class the image's Flink provides (or should)", n)
		}
	}
	if !job {
		t.Error("the job class is missing")
	}
}

// The Kyverno the hermetic lab builds (lab/tools/kyverno) is the version whose
// CRDs the kind lab validates its ClusterPolicy against.
func TestKyvernoToolsModuleIsTheKindLabsVersion(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join("..", "tools", "kyverno", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/kyverno/kyverno (v\S+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("lab/tools/kyverno/go.mod does not require github.com/kyverno/kyverno")
	}
	if want := strings.TrimPrefix(Kyverno.CRDModule, "github.com/kyverno/kyverno@"); string(m[1]) != want {
		t.Errorf("lab/tools/kyverno pins Kyverno %s, the kind lab %s", m[1], want)
	}
}
