package webhook

import (
	"context"
	"testing"
	"time"

	"github.com/karmada-failover/lab/restore/checkpoint"
)

// echoLocator finds chk-1 in every directory, so that any accepted
// directory leads to a restore.
type echoLocator struct{}

func (echoLocator) LatestCompleted(_ context.Context, dir, jobID string) (checkpoint.Checkpoint, error) {
	loc, err := checkpoint.ParseLocation(dir)
	if err != nil {
		return checkpoint.Checkpoint{}, err
	}
	return checkpoint.Checkpoint{ID: 1, SavepointPath: loc.Join(jobID, "chk-1").String(), Completed: testNow, JobID: jobID}, nil
}

// LatestCompletedInLineage finds nothing newer than the carried job's.
func (echoLocator) LatestCompletedInLineage(context.Context, string) (checkpoint.Checkpoint, error) {
	return checkpoint.Checkpoint{}, checkpoint.ErrNotFound
}

// LatestSavepoint finds none.
func (echoLocator) LatestSavepoint(context.Context, string, string) (checkpoint.Checkpoint, error) {
	return checkpoint.Checkpoint{}, checkpoint.ErrNotFound
}

func (echoLocator) CompletedAt(context.Context, string) (time.Time, error) {
	return time.Time{}, checkpoint.ErrNotFound
}

// FuzzMutateCheckpointDir: whatever checkpoint directory an object names, a
// restore never points outside the namespace's area, the path it sets parses
// back to itself, and Karmada's next update carries it forward.
func FuzzMutateCheckpointDir(f *testing.F) {
	for _, dir := range []string{
		ckptDir, "s3a://flink-checkpoints/team-a/x", "s3://flink-checkpoints/team-a/a?b#c%d", "s3://flink-checkpoints/team-a/ctl\x01x",
		"s3://flink-checkpoints/team-a/%2e%2e/team-b", "s3://flink-checkpoints/team-a\\..\\team-b", "s3://flink-checkpoints/team-ab",
		"s3://flink-checkpoints/team-a/../team-b", "s3://user@flink-checkpoints/team-a", "file:///etc", "",
	} {
		f.Add(dir)
	}
	f.Fuzz(func(t *testing.T, dir string) {
		h, err := NewHandler(testConfig(echoLocator{}, nil))
		if err != nil {
			t.Fatal(err)
		}
		prefix, _ := checkpoint.ParseLocation(h.cfg.AllowedPrefix("team-a"))
		r := h.decide(context.Background(), admissionRequest("", karmadaSA, fd(marker(), expiredAnn(), conf(dir), job()), nil))
		if r.savepoint == "" {
			return
		}
		loc, err := checkpoint.ParseLocation(r.savepoint)
		if err != nil || loc.String() != r.savepoint || !loc.Within(prefix) {
			t.Fatalf("dir %q: restored from %q (%v), outside %q or not re-parsable", dir, r.savepoint, err, prefix.String())
		}
		restored := fd(marker(), expiredAnn(AnnotationDecision, DecisionRestored, AnnotationCheckpoint, r.savepoint, AnnotationFromJobID, oldJob),
			conf(dir), job("initialSavepointPath", r.savepoint))
		next := h.decide(context.Background(), admissionRequest("UPDATE", karmadaSA, fd(marker(), expiredAnn(), conf(dir), job()), restored))
		if next.savepoint != r.savepoint {
			t.Fatalf("dir %q: carry-forward lost %q", dir, r.savepoint)
		}
	})
}
