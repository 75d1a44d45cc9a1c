package checkpoint

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestLatestSavepoint: a job's savepoints are found by Flink's naming
// (savepoint-<first 6 characters of the job id>-<random>), the newest
// _metadata wins, and another job's or an incomplete one never does.
func TestLatestSavepoint(t *testing.T) {
	const job = "0c1e0e10c25a4a4b8d0e8a4b9ab5e9a1"
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name     string
		files    map[string]time.Time
		want     string // directory name under the savepoint dir; "" = ErrNotFound
		wantNote string
	}{
		{name: "none", files: map[string]time.Time{"other/file": t0}},
		{name: "the newest of the job's", want: "savepoint-0c1e0e-bbbbbbbbbbbb", files: map[string]time.Time{
			"savepoint-0c1e0e-aaaaaaaaaaaa/_metadata": t0,
			"savepoint-0c1e0e-bbbbbbbbbbbb/_metadata": t0.Add(time.Minute),
		}},
		{name: "another job's newer savepoint is not the job's", want: "savepoint-0c1e0e-aaaaaaaaaaaa", files: map[string]time.Time{
			"savepoint-0c1e0e-aaaaaaaaaaaa/_metadata": t0,
			"savepoint-7f00aa-cccccccccccc/_metadata": t0.Add(time.Hour),
		}},
		{name: "a savepoint without _metadata (in progress, failed) is not completed", want: "savepoint-0c1e0e-aaaaaaaaaaaa", files: map[string]time.Time{
			"savepoint-0c1e0e-aaaaaaaaaaaa/_metadata":    t0,
			"savepoint-0c1e0e-dddddddddddd/some-state-1": t0.Add(time.Hour),
		}},
		{name: "only an incomplete one", files: map[string]time.Time{"savepoint-0c1e0e-dddddddddddd/x": t0}},
	}
	for _, fx := range storeFixtures {
		for _, c := range cases {
			t.Run(fx.name+"/"+c.name, func(t *testing.T) {
				dir, s, _ := fx.build(t, c.files)
				sp, err := s.LatestSavepoint(context.Background(), dir, job)
				if c.want == "" {
					if !errors.Is(err, ErrNotFound) {
						t.Fatalf("got %+v, %v; want ErrNotFound", sp, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if want := dir + "/" + c.want; sp.SavepointPath != want || !sp.Savepoint || sp.JobID != job {
					t.Fatalf("got %+v, want %s of job %s", sp, want, job)
				}
			})
		}
	}
}

func TestLatestSavepointBadInput(t *testing.T) {
	s := &Store{AllowFile: true}
	if _, err := s.LatestSavepoint(context.Background(), "file:///tmp/sp", "short"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a bad job id: %v, want ErrInvalid", err)
	}
	if _, err := s.LatestSavepoint(context.Background(), "hdfs://nn/sp", "0c1e0e10c25a4a4b8d0e8a4b9ab5e9a1"); err == nil ||
		!strings.Contains(err.Error(), "hdfs") {
		t.Fatalf("an unsupported scheme: %v", err)
	}
}
