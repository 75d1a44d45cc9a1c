package webhook

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	workv1alpha2 "github.com/karmada-failover/lab/apis/work/v1alpha2"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/karmada-failover/lab/restore/checkpoint"
)

// writeFlinkCheckpoint copies the checkpoint Flink 1.20.5 wrote
// (../checkpoint/testdata/flink-1.20.5/files: _metadata and relative handles)
// to dir, leaving out the state files named in omit, its _metadata written at.
func writeFlinkCheckpoint(t *testing.T, dir string, at time.Time, omit ...string) (files []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "checkpoint", "testdata", "flink-1.20.5", "files", checkpoint.MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	md, err := checkpoint.ParseMetadata(data, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range md.Files {
		name := filepath.Base(f.Path)
		files = append(files, name)
		if strings.Contains(strings.Join(omit, ","), name) {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, f.Size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, checkpoint.MetadataFile)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
	return files
}

// TestReplicationLag: the carried job's newest completed checkpoint has its
// _metadata but not one of the state files it references (a replicated store
// behind): the webhook restores the checkpoint before it and says which one it
// skipped and why (annotation, warning, Warning Event), and /locate agrees.
func TestReplicationLag(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "team-a", "wordcount")
	writeFlinkCheckpoint(t, filepath.Join(dir, oldJob, "chk-11"), chk12Written.Add(-time.Minute))
	files := writeFlinkCheckpoint(t, filepath.Join(dir, oldJob, "chk-12"), chk12Written)
	lagging := files[1]
	if err := os.Remove(filepath.Join(dir, oldJob, "chk-12", lagging)); err != nil {
		t.Fatal(err)
	}
	base := "file://" + dir + "/" + oldJob
	chk11, chk12 := base+"/chk-11", base+"/chk-12"

	for _, verify := range []bool{true, false} {
		h, events := newTestHandler(t, &checkpoint.Store{AllowFile: true, VerifyStateFiles: verify}, func(c *Config) {
			c.PrefixTemplate = "file://" + root + "/{namespace}/"
		})
		resp := roundTrip(t, h, admissionRequest("", karmadaSA, fd(marker(), map[string]string{workv1alpha2.FailoverPreservedKeysAnnotation: DefaultJobIDKey}, conf("file://"+dir), job()), nil))
		if !resp.Allowed {
			t.Fatalf("verify=%t: denied %+v", verify, resp.Result)
		}
		obj := resp.patched(t)
		got, _, _ := unstructured.NestedString(obj, "spec", "job", "initialSavepointPath")
		skipped, _, _ := unstructured.NestedString(obj, "metadata", "annotations", AnnotationSkipped)
		if !verify {
			// Without the check the newest completed one is chosen, and Flink
			// fails to restore it.
			if got != chk12 || skipped != "" {
				t.Errorf("verify=false: restored %s (skipped %q), want %s", got, skipped, chk12)
			}
			continue
		}
		if got != chk11 || skipped != chk12 {
			t.Fatalf("restored %s skipping %q, want %s skipping %s", got, skipped, chk11, chk12)
		}
		if !strings.Contains(strings.Join(resp.Warnings, "\n"), "chk-12/"+lagging) {
			t.Errorf("warnings %q do not name the missing state file %s", resp.Warnings, lagging)
		}
		ev := events.list()
		if len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+EventReasonCheckpointSkipped+" FlinkDeployment/team-a/wordcount: restoring "+chk11) ||
			!strings.Contains(ev[0], lagging) {
			t.Errorf("events %q", ev)
		}
		code, body, raw := locate(t, h, http.MethodGet, url.Values{"namespace": {"team-a"}, "checkpointDir": {"file://" + dir}, "jobId": {oldJob}})
		if code != 200 || body.SavepointPath != chk11 || len(body.Skipped) != 1 || body.Skipped[0].SavepointPath != chk12 {
			t.Errorf("locate: %d %s", code, raw)
		}
	}

	// Both missing a file: nothing restorable is the no-checkpoint case, and
	// the reason names both.
	if err := os.Remove(filepath.Join(dir, oldJob, "chk-11", lagging)); err != nil {
		t.Fatal(err)
	}
	h, _ := newTestHandler(t, &checkpoint.Store{AllowFile: true, VerifyStateFiles: true}, func(c *Config) {
		c.PrefixTemplate = "file://" + root + "/{namespace}/"
	})
	resp := roundTrip(t, h, admissionRequest("", karmadaSA, fd(marker(), map[string]string{workv1alpha2.FailoverPreservedKeysAnnotation: DefaultJobIDKey}, conf("file://"+dir), job()), nil))
	msg := ""
	if resp.Result != nil {
		msg = resp.Result.Message
	}
	if resp.Allowed || !strings.Contains(msg, "not restorable") || !strings.Contains(msg, "chk-11") || !strings.Contains(msg, "chk-12") {
		t.Errorf("nothing restorable: allowed=%t %q", resp.Allowed, msg)
	}
}
