package webhook

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/karmada-failover/lab/restore/checkpoint"
)

// spDir is the savepoint directory conf() sets.
const spDir = "s3://flink-checkpoints/team-a/wordcount-sp"

// TestFinalSavepoint: a planned move leaves the old job's final savepoint in
// the object's savepoint directory, newer than its latest checkpoint; both
// restore paths (the webhook, and Kyverno through POST /locate) restore it.
// An older savepoint, one outside the namespace's area and a store that
// cannot list savepoints are handled as said.
func TestFinalSavepoint(t *testing.T) {
	final := spDir + "/savepoint-" + oldJob[:6] + "-3f9c0a1b2c3d"
	cases := []struct {
		name      string
		savepoint *time.Time // completion of the old job's savepoint; nil = none
		spErr     error
		object    []byte
		code      int
		want      string // restored path; "" with code != 200
	}{
		{name: "final savepoint after the latest checkpoint: restored from it", savepoint: ptrTime(chk12Written.Add(3 * time.Second)),
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()), code: 200, want: final},
		{name: "an older savepoint: the latest checkpoint", savepoint: ptrTime(chk12Written.Add(-time.Hour)),
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()), code: 200, want: chk12},
		{name: "no savepoint: the latest checkpoint", object: fd(marker(), karmadaAnn(), conf(ckptDir), job()), code: 200, want: chk12},
		{name: "savepoint directory outside the namespace's area: not looked at", savepoint: ptrTime(chk12Written.Add(time.Hour)),
			object: fd(marker(), karmadaAnn(), conf(ckptDir, "state.savepoints.dir", "s3://flink-checkpoints/team-b/sp"), job()), code: 200, want: chk12},
		{name: "savepoints cannot be listed: the lookup failed, nothing restored", spErr: errors.New("operation error S3: ListObjectsV2, StatusCode: 500"),
			object: fd(marker(), karmadaAnn(), conf(ckptDir), job()), code: 503},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loc := newFakeLocator()
			k := spDir + "|savepoint|" + oldJob
			if c.savepoint != nil {
				loc.results[k] = checkpointAt(final, oldJob, *c.savepoint)
				loc.results["s3://flink-checkpoints/team-b/sp|savepoint|"+oldJob] = checkpointAt("s3://flink-checkpoints/team-b/sp/savepoint-x", oldJob, *c.savepoint)
			}
			if c.spErr != nil {
				loc.errs[k] = c.spErr
			}
			h, _ := newTestHandler(t, loc, nil)
			code, got := decideViaLocate(t, h, karmadaSA, c.object, false)
			if code != c.code {
				t.Fatalf("HTTP %d, want %d: %+v", code, c.code, got)
			}
			if c.code != 200 {
				if got.SavepointPath != "" {
					t.Fatalf("a path set although the lookup failed: %+v", got)
				}
				return
			}
			wantAnn := map[string]string{AnnotationDecision: DecisionRestored, AnnotationCheckpoint: c.want, AnnotationFromJobID: oldJob}
			if got.Decision != DecisionRestored || got.SavepointPath != c.want || !maps.Equal(got.Annotations, wantAnn) {
				t.Fatalf("got %+v, want %s restored", got, c.want)
			}
			// The webhook path decides the same.
			resp := roundTrip(t, h, admissionRequest("", karmadaSA, c.object, nil))
			if !resp.Allowed || !strings.Contains(string(resp.Patch), c.want) {
				t.Fatalf("/mutate: allowed=%v patch %s, want %s", resp.Allowed, resp.Patch, c.want)
			}
		})
	}
}

func ptrTime(t time.Time) *time.Time { return &t }

func checkpointAt(path, jobID string, completed time.Time) checkpoint.Checkpoint {
	return checkpoint.Checkpoint{SavepointPath: path, JobID: jobID, Completed: completed, Savepoint: true}
}
