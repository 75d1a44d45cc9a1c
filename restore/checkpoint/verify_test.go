package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// flinkSnapshot is a checkpoint Flink 1.20.5 wrote (testdata/flink-1.20.5):
// its _metadata and the state files it references by relative handles.
type flinkSnapshot struct {
	metadata []byte
	files    map[string]int64 // name -> size
}

func loadSnapshot(t testing.TB, dir string) flinkSnapshot {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "flink-1.20.5", dir, MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	md, err := ParseMetadata(data, "s3://x/y")
	if err != nil {
		t.Fatal(err)
	}
	s := flinkSnapshot{metadata: data, files: map[string]int64{}}
	for _, f := range md.Files {
		s.files[path.Base(f.Path)] = f.Size
	}
	return s
}

// names returns the state files' names, sorted.
func (s flinkSnapshot) names() []string {
	var out []string
	for n := range s.files {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// writeFileSnapshot writes snap into dir with _metadata modified at t.
func writeFileSnapshot(t *testing.T, dir string, snap flinkSnapshot, at time.Time) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, size := range snap.files {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	md := filepath.Join(dir, MetadataFile)
	if err := os.WriteFile(md, snap.metadata, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(md, at, at); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyFileCheckpoints(t *testing.T) {
	snap := loadSnapshot(t, "files")
	hidden := snap.names()[1]
	for name, c := range map[string]struct {
		damage      func(chk69 string)
		want        string
		skipped     string
		notFound    bool
		unverified  bool
		damageChk68 bool
	}{
		"all files present":           {damage: func(string) {}, want: "chk-69"},
		"a state file not replicated": {damage: func(d string) { _ = os.Remove(filepath.Join(d, hidden)) }, want: "chk-68", skipped: "1 of the 5 state files"},
		"a state file short": {damage: func(d string) { _ = os.Truncate(filepath.Join(d, hidden), 1) }, want: "chk-68",
			skipped: fmt.Sprintf("(1 bytes, the handle reads %d)", snap.files[hidden])},
		"_metadata not Flink's": {damage: func(d string) { _ = os.WriteFile(filepath.Join(d, MetadataFile), []byte("garbage!!"), 0o644) }, want: "chk-68",
			skipped: "corrupt checkpoint metadata"},
		"an unknown format version": {damage: func(d string) {
			b := append([]byte(nil), snap.metadata...)
			b[7] = 9
			_ = os.WriteFile(filepath.Join(d, MetadataFile), b, 0o644)
		}, want: "chk-69", unverified: true},
		"none restorable": {damage: func(d string) { _ = os.Remove(filepath.Join(d, hidden)) }, damageChk68: true, notFound: true},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			job := strings.Repeat("ab", 16)
			chk68, chk69 := filepath.Join(root, job, "chk-68"), filepath.Join(root, job, "chk-69")
			writeFileSnapshot(t, chk68, snap, baseTime)
			writeFileSnapshot(t, chk69, snap, baseTime.Add(time.Second))
			c.damage(chk69)
			if c.damageChk68 {
				c.damage(chk68)
			}
			if c.unverified {
				_ = os.Chtimes(filepath.Join(chk69, MetadataFile), baseTime.Add(time.Second), baseTime.Add(time.Second))
			}
			s := &Store{AllowFile: true, VerifyStateFiles: true}
			cp, err := s.LatestCompleted(context.Background(), "file://"+root, job)
			if c.notFound {
				if !errors.Is(err, ErrNotRestorable) || !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), hidden) {
					t.Fatalf("err = %v, want ErrNotRestorable (an ErrNotFound) naming %s", err, hidden)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if path.Base(cp.SavepointPath) != c.want {
				t.Fatalf("chose %s, want %s", cp.SavepointPath, c.want)
			}
			switch {
			case c.skipped == "" && len(cp.Skipped) > 0:
				t.Errorf("skipped %v", cp.Skipped)
			case c.skipped != "" && (len(cp.Skipped) != 1 || path.Base(cp.Skipped[0].SavepointPath) != "chk-69" || !strings.Contains(cp.Skipped[0].Reason, c.skipped)):
				t.Errorf("skipped %v, want chk-69 (%s)", cp.Skipped, c.skipped)
			}
			if c.unverified != (cp.Unverified != "") {
				t.Errorf("unverified = %q", cp.Unverified)
			}
			// Off, the newest completed one is chosen as before.
			off, err := (&Store{AllowFile: true}).LatestCompleted(context.Background(), "file://"+root, job)
			if err != nil || path.Base(off.SavepointPath) != "chk-69" {
				t.Errorf("verification off: %v, %v", off.SavepointPath, err)
			}
		})
	}
}

// s3Snapshot adds snap under key (a chk-N or savepoint directory) to f, its
// _metadata modified at t; the files named in skip are left out.
func s3Snapshot(f *fakeS3, bucket, key string, snap flinkSnapshot, at time.Time, skip ...string) {
	if f.objects == nil {
		f.objects, f.modified, f.content = map[string][]string{}, map[string]time.Time{}, map[string][]byte{}
	}
	for name, size := range snap.files {
		if strings.Contains(strings.Join(skip, "/"), name) {
			continue
		}
		f.objects[bucket] = append(f.objects[bucket], key+"/"+name)
		f.content[bucket+"/"+key+"/"+name] = make([]byte, size)
	}
	f.objects[bucket] = append(f.objects[bucket], key+"/"+MetadataFile)
	f.content[bucket+"/"+key+"/"+MetadataFile] = snap.metadata
	f.modified[bucket+"/"+key+"/"+MetadataFile] = at
}

func TestVerifyS3(t *testing.T) {
	cp := loadSnapshot(t, "files")
	sp := loadSnapshot(t, "savepoint")
	jobA, jobB := strings.Repeat("a", 32), strings.Repeat("b", 32)
	f := &fakeS3{pageSize: 1000}
	// Job A's chk-5 and chk-6; chk-6 lacks a state file. Job B (started from
	// A's state) completed chk-2, newer still, also lacking one.
	s3Snapshot(f, "ckpt", "team-a/app/"+jobA+"/chk-5", cp, baseTime)
	s3Snapshot(f, "ckpt", "team-a/app/"+jobA+"/chk-6", cp, baseTime.Add(time.Second), cp.names()[0])
	s3Snapshot(f, "ckpt", "team-a/app/"+jobB+"/chk-2", cp, baseTime.Add(2*time.Second), cp.names()[2])
	// Savepoints of job A: the newer one lacks a file.
	s3Snapshot(f, "ckpt", "team-a/sp/savepoint-aaaaaa-000001", sp, baseTime.Add(3*time.Second))
	s3Snapshot(f, "ckpt", "team-a/sp/savepoint-aaaaaa-000002", sp, baseTime.Add(4*time.Second), sp.names()[1])
	s := newFakeS3Store(t, f)
	s.VerifyStateFiles = true
	ctx := context.Background()

	got, err := s.LatestCompleted(ctx, "s3://ckpt/team-a/app", jobA)
	if err != nil {
		t.Fatal(err)
	}
	if want := "s3://ckpt/team-a/app/" + jobA + "/chk-5"; got.SavepointPath != want || got.ID != 5 || len(got.Skipped) != 1 ||
		!strings.Contains(got.Skipped[0].Reason, "s3://ckpt/team-a/app/"+jobA+"/chk-6/"+cp.names()[0]) {
		t.Errorf("LatestCompleted = %+v, want %s skipping chk-6 for %s", got, want, cp.names()[0])
	}
	lists, heads, gets := f.countsWithGets()
	// One listing of chk-*/, a HEAD of each _metadata; then a GET of each
	// examined _metadata and a HEAD of each of its 5 state files.
	if lists != 1 || gets != 2 || heads != 2+2*len(cp.files) {
		t.Errorf("requests: %d lists, %d heads, %d gets", lists, heads, gets)
	}

	lin, err := s.LatestCompletedInLineage(ctx, "s3://ckpt/team-a/app")
	if err != nil {
		t.Fatal(err)
	}
	if lin.JobID != jobA || lin.ID != 5 || len(lin.Skipped) != 2 || lin.Skipped[0].SavepointPath != "s3://ckpt/team-a/app/"+jobB+"/chk-2" {
		t.Errorf("LatestCompletedInLineage = %+v, want job A's chk-5 skipping job B's chk-2 and A's chk-6", lin)
	}

	sav, err := s.LatestSavepoint(ctx, "s3://ckpt/team-a/sp", jobA)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(sav.SavepointPath, "savepoint-aaaaaa-000001") || len(sav.Skipped) != 1 {
		t.Errorf("LatestSavepoint = %+v", sav)
	}

	// A store error while confirming is an error, not a skip.
	f.failStatus, f.failCode = 503, "SlowDown"
	if _, err := s.LatestCompleted(ctx, "s3://ckpt/team-a/app", jobA); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("store failure: err = %v, want a retriable error", err)
	}
}

func TestVerifyMaxSkipped(t *testing.T) {
	cp := loadSnapshot(t, "files")
	job := strings.Repeat("c", 32)
	f := &fakeS3{pageSize: 1000}
	for n := 1; n <= 5; n++ {
		s3Snapshot(f, "ckpt", fmt.Sprintf("app/%s/chk-%d", job, n), cp, baseTime.Add(time.Duration(n)*time.Second), cp.names()[0])
	}
	s := newFakeS3Store(t, f)
	s.VerifyStateFiles, s.MaxSkipped = true, 2
	_, err := s.LatestCompleted(context.Background(), "s3://ckpt/app", job)
	if !errors.Is(err, ErrNotRestorable) || !strings.Contains(err.Error(), "2 completed but not restorable") {
		t.Fatalf("err = %v", err)
	}
	if _, _, gets := f.countsWithGets(); gets != 2 {
		t.Errorf("%d _metadata read, want 2 (MaxSkipped)", gets)
	}
}

// storeWith100kFiles is a job directory holding 100,000 objects: a
// checkpoint chk-40 of an incremental state backend referencing refs of the
// shared/ files plus 5 files of its own, and missing ones left out.
func storeWith100kFiles(t testing.TB, refs int, missing ...int) (*fakeS3, *Store) {
	job := strings.Repeat("d", 32)
	dir := "app/" + job
	f := &fakeS3{pageSize: 1000, objects: map[string][]string{}, modified: map[string]time.Time{}, content: map[string][]byte{}}
	w := &metaWriter{}
	w.i32(metadataMagic)
	w.i32(3)
	w.i64(40)
	w.i32(0)
	w.i32(1)
	w.i64(1)
	w.i64(2)
	w.i32(1)
	w.i32(128)
	w.u8(handleNull)
	w.i32(1)
	w.i32(0)
	w.i32(0)
	w.i32(0)
	w.u8(handleIncrementalKeyGroupsV2)
	w.i64(40)
	w.utf("backend")
	w.i32(0)
	w.i32(128)
	w.i64(0)
	w.u8(handleRelativeStream)
	w.utf("meta")
	w.i64(1)
	w.i32(int32(refs))
	const total = 100000
	keys := make([]string, 0, total)
	isMissing := map[int]bool{}
	for _, m := range missing {
		isMissing[m] = true
	}
	for i := range total - 7 {
		name := fmt.Sprintf("%s/shared/%08d-sst", dir, i)
		if i < refs {
			w.utf(fmt.Sprintf("%06d.sst", i))
			w.file("s3://ckpt/"+name, 1)
		}
		if !isMissing[i] {
			keys = append(keys, name)
		}
	}
	w.i32(0)
	w.utf("id")
	w.u8(handleNull)
	w.i32(0)
	w.i32(0)
	keys = append(keys, dir+"/chk-40/meta", dir+"/chk-40/"+MetadataFile, dir+"/chk-39/"+MetadataFile)
	for i := range 4 {
		keys = append(keys, fmt.Sprintf("%s/taskowned/%d", dir, i))
	}
	f.objects["ckpt"] = keys
	f.content["ckpt/"+dir+"/chk-40/"+MetadataFile] = w.Bytes()
	f.content["ckpt/"+dir+"/chk-39/"+MetadataFile] = synthetic(func(w *metaWriter) { w.u8(handleNull) })
	f.modified["ckpt/"+dir+"/chk-40/"+MetadataFile] = baseTime.Add(time.Second)
	s := newFakeS3Store(t, f)
	s.VerifyStateFiles = true
	return f, s
}

// TestVerify100kFiles: a checkpoint referencing 20,000 of the 100,000 files
// of its job directory is confirmed with one listing of shared/ (100
// requests of 1,000 names), not 20,000 look-ups; a missing one is found.
func TestVerify100kFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100,000-object store")
	}
	job := strings.Repeat("d", 32)
	for _, missing := range [][]int{nil, {12345}} {
		f, s := storeWith100kFiles(t, 20000, missing...)
		start := time.Now()
		cp, err := s.LatestCompleted(context.Background(), "s3://ckpt/app", job)
		elapsed := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		lists, heads, gets := f.countsWithGets()
		t.Logf("missing %v: chose %s in %s: %d lists, %d heads, %d gets", missing, path.Base(cp.SavepointPath), elapsed, lists, heads, gets)
		want := "chk-40"
		if missing != nil {
			want = "chk-39"
			if len(cp.Skipped) != 1 || !strings.Contains(cp.Skipped[0].Reason, "00012345-sst") {
				t.Errorf("skipped %v", cp.Skipped)
			}
		}
		if path.Base(cp.SavepointPath) != want {
			t.Errorf("chose %s, want %s", cp.SavepointPath, want)
		}
		// chk-*/ listing; shared/ listed (100 pages); chk-40/meta a HEAD.
		if lists > 1+100 || heads > 2+1 {
			t.Errorf("%d lists and %d heads for 20,000 referenced files", lists, heads)
		}
	}
}

// BenchmarkVerify100kFiles: the newest checkpoint of a job directory of
// 100,000 objects references 20,000 of them (an incremental checkpoint's
// shared/ files); the store answers each request after 1 ms. "list" is the
// locator's default (a directory with DefaultListThreshold or more referenced
// files is listed), "head" one look-up per file (ListThreshold above the
// count), both in one run:
//
//	go test ./restore/checkpoint -run '^$' -bench Verify100kFiles -benchtime 3x
func BenchmarkVerify100kFiles(b *testing.B) {
	job := strings.Repeat("d", 32)
	for _, c := range []struct {
		name      string
		threshold int
	}{{"list", 0}, {"head", 1 << 30}} {
		b.Run(c.name, func(b *testing.B) {
			f, s := storeWith100kFiles(b, 20000)
			f.latency = time.Millisecond
			s.ListThreshold = c.threshold
			s.StatConcurrency = DefaultStatConcurrency
			b.ResetTimer()
			for range b.N {
				cp, err := s.LatestCompleted(context.Background(), "s3://ckpt/app", job)
				if err != nil || path.Base(cp.SavepointPath) != "chk-40" {
					b.Fatalf("%v %v", cp.SavepointPath, err)
				}
			}
			b.StopTimer()
			lists, heads, gets := f.countsWithGets()
			b.ReportMetric(float64(lists+heads+gets)/float64(b.N), "requests/op")
		})
	}
}

// TestVerifyFlinkSavepoint: a savepoint exactly as Flink 1.20.5 wrote it
// (testdata/flink-1.20.5/savepoint: _metadata and its three state files) is
// restorable where it lies; without one of its files it is not.
func TestVerifyFlinkSavepoint(t *testing.T) {
	src := filepath.Join("testdata", "flink-1.20.5", "savepoint")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	sp := filepath.Join(root, "savepoint-c3763e-33a77093ef58")
	if err := os.MkdirAll(sp, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sp, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	job := "c3763e" + strings.Repeat("0", 26)
	s := &Store{AllowFile: true, VerifyStateFiles: true}
	got, err := s.LatestSavepoint(context.Background(), "file://"+root, job)
	if err != nil || got.SavepointPath != "file://"+sp || got.Unverified != "" {
		t.Fatalf("LatestSavepoint = %+v, %v", got, err)
	}
	if err := os.Remove(filepath.Join(sp, "5520cd09-c98e-47b8-b9bf-f7fc03cef763")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LatestSavepoint(context.Background(), "file://"+root, job); !errors.Is(err, ErrNotRestorable) || !strings.Contains(err.Error(), "5520cd09") {
		t.Fatalf("without a state file: err = %v", err)
	}
}

// TestVerifyOnlyWithinTheLookedUpDirectory: a _metadata naming a file outside
// the directory the look-up was asked about (another team's area of the same
// bucket) does not make the locator look that file up: the checkpoint is taken
// unverified, and the store sees no request for the file.
func TestVerifyOnlyWithinTheLookedUpDirectory(t *testing.T) {
	job := strings.Repeat("e", 32)
	w := &metaWriter{}
	w.i32(metadataMagic)
	w.i32(3)
	w.i64(7)
	w.i32(0)
	w.i32(1)
	w.i64(1)
	w.i64(2)
	w.i32(1)
	w.i32(128)
	w.u8(handleNull)
	w.i32(1)
	w.i32(0)
	w.i32(0)
	w.i32(0)
	w.u8(handleKeyGroupsV2)
	w.i32(0)
	w.i32(0)
	w.file("s3://ckpt/team-b/private/state", 3)
	w.utf("id")
	w.u8(handleNull)
	w.i32(0)
	w.i32(0)
	key := "team-a/app/" + job + "/chk-7/" + MetadataFile
	f := &fakeS3{pageSize: 1000,
		objects:  map[string][]string{"ckpt": {key, "team-b/private/state"}},
		content:  map[string][]byte{"ckpt/" + key: w.Bytes()},
		modified: map[string]time.Time{}}
	s := newFakeS3Store(t, f)
	s.VerifyStateFiles = true
	cp, err := s.LatestCompleted(context.Background(), "s3://ckpt/team-a/app", job)
	if err != nil {
		t.Fatal(err)
	}
	if cp.ID != 7 || !strings.Contains(cp.Unverified, "s3://ckpt/team-b/private/state is outside s3://ckpt/team-a/app") {
		t.Errorf("got %+v, want chk-7 unverified, naming the file outside the looked-up directory", cp)
	}
	for _, r := range f.seen() {
		if strings.Contains(r.URL.Path, "team-b") {
			t.Errorf("the store saw %s %s", r.Method, r.URL.Path)
		}
	}
}
