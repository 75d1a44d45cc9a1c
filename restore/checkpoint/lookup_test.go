package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// storeFixture is one store (file or fake S3) holding completed checkpoints
// with given completion times and other objects.
type storeFixture struct {
	name string
	// dir returns the checkpoint dir URI holding files (relative keys, with
	// completion times; zero = now) and the store reading it.
	build func(t *testing.T, files map[string]time.Time) (dir string, s *Store, f *fakeS3)
}

var storeFixtures = []storeFixture{
	{"file", func(t *testing.T, files map[string]time.Time) (string, *Store, *fakeS3) {
		base := filepath.Join(t.TempDir(), "team-a", "wordcount")
		for rel, mt := range files {
			touch(t, base, rel)
			if !mt.IsZero() {
				if err := os.Chtimes(filepath.Join(base, filepath.FromSlash(rel)), mt, mt); err != nil {
					t.Fatal(err)
				}
			}
		}
		return "file://" + base, &Store{AllowFile: true}, nil
	}},
	{"s3", func(t *testing.T, files map[string]time.Time) (string, *Store, *fakeS3) {
		f := &fakeS3{objects: map[string][]string{"flink-checkpoints": nil}, modified: map[string]time.Time{}}
		for rel, mt := range files {
			key := "team-a/wordcount/" + rel
			f.objects["flink-checkpoints"] = append(f.objects["flink-checkpoints"], key)
			if !mt.IsZero() {
				f.modified["flink-checkpoints/"+key] = mt
			}
		}
		return "s3://flink-checkpoints/team-a/wordcount", newFakeS3Store(t, f), f
	}},
}

// TestReusedJobID: a job restarted with the same job id and a reset counter
// leaves two runs in one <jobId>/ directory; the newest _metadata wins, not
// the highest N.
func TestReusedJobID(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		files  map[string]time.Time
		wantID int64
	}{
		{
			name: "second run with a reset counter is newer",
			files: map[string]time.Time{
				jobA + "/chk-48/_metadata": t0, jobA + "/chk-49/_metadata": t0.Add(time.Minute), jobA + "/chk-50/_metadata": t0.Add(2 * time.Minute),
				jobA + "/chk-50/state-0":  t0,
				jobA + "/chk-2/_metadata": t0.Add(time.Hour), jobA + "/chk-3/_metadata": t0.Add(time.Hour + time.Minute),
				jobA + "/chk-4/state-0": t0.Add(time.Hour + 2*time.Minute), // in progress
			},
			wantID: 3,
		},
		{
			name: "one run: the highest N is the newest",
			files: map[string]time.Time{
				jobA + "/chk-9/_metadata": t0, jobA + "/chk-10/_metadata": t0.Add(time.Minute), jobA + "/chk-11/state": t0.Add(2 * time.Minute),
			},
			wantID: 10,
		},
		{
			name: "equal times (one-second store clock): the highest N",
			files: map[string]time.Time{
				jobA + "/chk-7/_metadata": t0, jobA + "/chk-8/_metadata": t0,
			},
			wantID: 8,
		},
	}
	for _, fx := range storeFixtures {
		for _, c := range cases {
			t.Run(fx.name+"/"+c.name, func(t *testing.T) {
				dir, s, _ := fx.build(t, c.files)
				got, err := s.LatestCompleted(context.Background(), dir, jobA)
				if err != nil {
					t.Fatal(err)
				}
				if got.ID != c.wantID || got.SavepointPath != fmt.Sprintf("%s/%s/chk-%d", dir, jobA, c.wantID) {
					t.Fatalf("got %+v, want chk-%d", got, c.wantID)
				}
				if want := c.files[fmt.Sprintf("%s/chk-%d/_metadata", jobA, c.wantID)]; !got.Completed.Equal(want) {
					t.Errorf("completed = %v, want %v", got.Completed, want)
				}
			})
		}
	}
}

// TestListingCost: a job whose checkpoints hold 100,000 state files is
// located with one delimiter listing and one HEAD per chk-N directory, well
// within the admission budget, even with a slow store.
func TestListingCost(t *testing.T) {
	const stateFiles = 100_000
	f := &fakeS3{pageSize: 1000, latency: 20 * time.Millisecond, objects: map[string][]string{}}
	keys := make([]string, 0, stateFiles+8)
	prefix := "team-a/big/" + jobA + "/"
	for n := 97; n <= 100; n++ {
		keys = append(keys, fmt.Sprintf("%schk-%d/_metadata", prefix, n))
	}
	for i := 0; i < stateFiles; i++ {
		keys = append(keys, fmt.Sprintf("%schk-%d/%08x-state", prefix, 97+i%5, i)) // chk-101 is in progress
	}
	keys = append(keys, prefix+"shared/x", prefix+"taskowned/y")
	f.objects["flink-checkpoints"] = keys
	s := newFakeS3Store(t, f)

	const admissionBudget = 7 * time.Second // the webhook's --lookup-timeout default
	ctx, cancel := context.WithTimeout(context.Background(), admissionBudget)
	defer cancel()
	start := time.Now()
	got, err := s.LatestCompleted(ctx, "s3://flink-checkpoints/team-a/big", jobA)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("after %v: %v", elapsed, err)
	}
	if got.ID != 100 {
		t.Errorf("got %+v, want chk-100", got)
	}
	lists, heads := f.counts()
	t.Logf("%d state files: %d list and %d head requests, %v", stateFiles, lists, heads, elapsed)
	if lists != 1 || heads != 5 {
		t.Errorf("%d list and %d head requests, want 1 and 5 (one per chk-N directory)", lists, heads)
	}
	if elapsed > admissionBudget/2 {
		t.Errorf("lookup took %v, more than half the admission budget %v", elapsed, admissionBudget)
	}
}

func TestTooManyCheckpointDirs(t *testing.T) {
	files := map[string]time.Time{}
	for n := 1; n <= 5; n++ {
		files[fmt.Sprintf("%s/chk-%d/_metadata", jobA, n)] = time.Time{}
	}
	for _, fx := range storeFixtures {
		t.Run(fx.name, func(t *testing.T) {
			dir, s, _ := fx.build(t, files)
			s.MaxCheckpointDirs = 4
			_, err := s.LatestCompleted(context.Background(), dir, jobA)
			if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "more than 4 chk-N directories") {
				t.Fatalf("err = %v, want a bound error", err)
			}
		})
	}
}

// TestSpecialCharacterKeys: keys with "?", "#", "%", spaces and control
// characters are found, and the returned path parses back to the same key.
func TestSpecialCharacterKeys(t *testing.T) {
	for _, sub := range []string{"a?b", "c#d", "100%", "%2e%2e", "sp ace", "ctl\x01x", "tab\tx", "ünï"} {
		for _, fx := range storeFixtures {
			t.Run(fx.name+"/"+sub, func(t *testing.T) {
				dir, s, _ := fx.build(t, map[string]time.Time{sub + "/" + jobA + "/chk-3/_metadata": {}})
				dir += "/" + sub
				got, err := s.LatestCompleted(context.Background(), dir, jobA)
				if err != nil {
					t.Fatal(err)
				}
				if want := dir + "/" + jobA + "/chk-3"; got.SavepointPath != want {
					t.Fatalf("path = %q, want %q", got.SavepointPath, want)
				}
				loc, err := ParseLocation(got.SavepointPath)
				if err != nil || loc.String() != got.SavepointPath {
					t.Fatalf("returned path does not re-parse: %+v %v", loc, err)
				}
				if _, err := s.CompletedAt(context.Background(), got.SavepointPath); err != nil {
					t.Errorf("CompletedAt(%q): %v", got.SavepointPath, err)
				}
			})
		}
	}
}

// TestS3StoreQuirks: stores that ignore encoding-type=url (raw names, which
// must not be decoded) or the delimiter (every key listed) are read right.
func TestS3StoreQuirks(t *testing.T) {
	keys := []string{
		"100%/" + jobA + "/chk-1/_metadata", "100%/" + jobA + "/chk-1/state",
		"a+b%41/" + jobA + "/chk-2/_metadata", "a+b%41/" + jobA + "/chk-3/state",
	}
	for _, f := range []*fakeS3{
		{rawNames: true, objects: map[string][]string{"b": keys}},
		{noDelimiter: true, objects: map[string][]string{"b": keys}},
		{rawNames: true, noDelimiter: true, objects: map[string][]string{"b": keys}},
	} {
		s := newFakeS3Store(t, f)
		for dir, want := range map[string]string{"s3://b/100%": "/chk-1", "s3://b/a+b%41": "/chk-2"} {
			got, err := s.LatestCompleted(context.Background(), dir, jobA)
			if err != nil || got.SavepointPath != dir+"/"+jobA+want {
				t.Errorf("raw names %v, no delimiter %v, %s: %+v %v", f.rawNames, f.noDelimiter, dir, got, err)
			}
		}
	}
}

func TestCompletedAt(t *testing.T) {
	t1 := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	files := map[string]time.Time{
		"sp/savepoint-1a2b3c/_metadata": t1,
		"sp/savepoint-1a2b3c/state":     t1.Add(-time.Minute),
		"sp/savepoint-empty/state":      t1,
	}
	for _, fx := range storeFixtures {
		t.Run(fx.name, func(t *testing.T) {
			dir, s, _ := fx.build(t, files)
			ctx := context.Background()
			for _, p := range []string{dir + "/sp/savepoint-1a2b3c", dir + "/sp/savepoint-1a2b3c/", dir + "/sp/savepoint-1a2b3c/_metadata"} {
				if got, err := s.CompletedAt(ctx, p); err != nil || !got.Equal(t1) {
					t.Errorf("CompletedAt(%q) = %v, %v; want %v", p, got, err, t1)
				}
			}
			for _, p := range []string{dir + "/sp/savepoint-empty", dir + "/sp/none"} {
				if _, err := s.CompletedAt(ctx, p); !errors.Is(err, ErrNotFound) {
					t.Errorf("CompletedAt(%q) err = %v, want ErrNotFound", p, err)
				}
			}
			if _, err := s.CompletedAt(ctx, dir+"/../x"); !errors.Is(err, ErrInvalid) {
				t.Errorf("traversal: err = %v, want ErrInvalid", err)
			}
		})
	}
}
