package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestLineageFile: the newest completed checkpoint of every job under a
// local checkpoint directory, by completion time, whatever the ids.
func TestLineageFile(t *testing.T) {
	base := filepath.Join(t.TempDir(), "ckpt")
	// jobA (the carried job) checkpointed up to chk-40; jobB started from its
	// state later and has completed chk-3 since; jobB's chk-4 is in progress.
	touch(t, base, jobA+"/chk-40/_metadata")
	touch(t, base, jobB+"/chk-3/_metadata")
	touch(t, base, jobB+"/chk-4/state")
	touch(t, base, "shared/x")
	touch(t, base, "savepoints/chk-99/_metadata")
	old := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for rel, tm := range map[string]time.Time{jobA + "/chk-40/_metadata": old, jobB + "/chk-3/_metadata": old.Add(time.Minute)} {
		if err := os.Chtimes(filepath.Join(base, rel), tm, tm); err != nil {
			t.Fatal(err)
		}
	}
	s := &Store{AllowFile: true}
	got, err := s.LatestCompletedInLineage(context.Background(), "file://"+base)
	if err != nil {
		t.Fatal(err)
	}
	if got.JobID != jobB || got.ID != 3 || got.SavepointPath != "file://"+base+"/"+jobB+"/chk-3" {
		t.Fatalf("got %+v, want chk-3 of the later job %s (a lower id, completed later)", got, jobB)
	}

	// The carried job's checkpoint completed last: it wins over a higher id.
	later := old.Add(2 * time.Minute)
	if err := os.Chtimes(filepath.Join(base, jobA, "chk-40", MetadataFile), later, later); err != nil {
		t.Fatal(err)
	}
	if got, err = s.LatestCompletedInLineage(context.Background(), "file://"+base); err != nil || got.JobID != jobA || got.ID != 40 {
		t.Fatalf("got %+v, %v, want chk-40 of %s", got, err, jobA)
	}

	empty := filepath.Join(t.TempDir(), "empty")
	touch(t, empty, jobA+"/chk-1/state")
	for _, dir := range []string{empty, filepath.Join(t.TempDir(), "missing")} {
		if _, err := s.LatestCompletedInLineage(context.Background(), "file://"+dir); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: err = %v, want ErrNotFound", dir, err)
		}
	}
	if _, err := (&Store{AllowFile: true, MaxJobDirs: 1}).LatestCompletedInLineage(context.Background(), "file://"+base); err == nil ||
		!strings.Contains(err.Error(), "more than 1 job directories") {
		t.Errorf("bound: err = %v", err)
	}
	if _, err := (&Store{}).LatestCompletedInLineage(context.Background(), "file://"+base); !errors.Is(err, ErrInvalid) {
		t.Errorf("file disabled: err = %v, want ErrInvalid", err)
	}
}

// TestLineageS3: the same through S3, with paging, and with a store that
// ignores the delimiter.
func TestLineageS3(t *testing.T) {
	objects := map[string][]string{"flink-checkpoints": {
		"team-a/job1/" + jobA + "/chk-40/_metadata",
		"team-a/job1/" + jobA + "/chk-40/state",
		"team-a/job1/" + jobB + "/chk-3/_metadata",
		"team-a/job1/" + jobB + "/chk-4/state",
		"team-a/job1/" + "ffffffffffffffffffffffffffffffff" + "/chk-1/state",
		"team-a/job1/shared/x",
		"team-a/job1-other/" + "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee" + "/chk-9/_metadata",
	}}
	modified := map[string]time.Time{
		"flink-checkpoints/team-a/job1/" + jobB + "/chk-3/_metadata":                           baseTime.Add(time.Minute),
		"flink-checkpoints/team-a/job1-other/eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee/chk-9/_metadata": baseTime.Add(time.Hour),
	}
	for _, noDelimiter := range []bool{false, true} {
		s := newFakeS3Store(t, &fakeS3{objects: objects, modified: modified, noDelimiter: noDelimiter})
		got, err := s.LatestCompletedInLineage(context.Background(), "s3://flink-checkpoints/team-a/job1")
		if err != nil {
			t.Fatal(err)
		}
		if want := (Checkpoint{ID: 3, SavepointPath: "s3://flink-checkpoints/team-a/job1/" + jobB + "/chk-3", Completed: baseTime.Add(time.Minute), JobID: jobB}); !reflect.DeepEqual(got, want) {
			t.Errorf("noDelimiter=%t: got %+v, want %+v (job1-other is another deployment's directory)", noDelimiter, got, want)
		}
	}
	s := newFakeS3Store(t, &fakeS3{objects: objects})
	if _, err := s.LatestCompletedInLineage(context.Background(), "s3://flink-checkpoints/team-b/none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("empty: err = %v, want ErrNotFound", err)
	}
}
