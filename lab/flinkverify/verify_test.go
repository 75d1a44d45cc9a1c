package flinkverify

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// seqs renders the lines of a part file holding from..to (inclusive).
func seqs(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func file(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

func TestVerify(t *testing.T) {
	const (
		a = "part-1b3c5f7e-0-"  // the first incarnation's writer
		b = "part-9d8e7f6a-0-"  // the one restored after it
		p = ".part-9d8e7f6a-0-" // hidden: in progress or pending
	)
	tests := []struct {
		name string
		fs   fstest.MapFS
		want Report
	}{{
		name: "no output yet",
		fs:   fstest.MapFS{},
		want: Report{Max: -1, FirstMissing: -1, FirstDuplicated: -1},
	}, {
		name: "one run: every sequence once, the open file does not count",
		fs: fstest.MapFS{
			a + "0.txt": file(seqs(0, 99)), a + "1.txt": file(seqs(100, 149)),
			".part-1b3c5f7e-0-2.txt.inprogress.4f2a": file(seqs(150, 160)),
		},
		want: Report{Files: 2, Records: 150, Max: 149, Expected: 150, FirstMissing: -1, FirstDuplicated: -1,
			UncommittedFiles: 1, Uncommitted: 11},
	}, {
		name: "restored from the latest checkpoint: the dead run's uncommitted records are redone, none committed twice",
		fs: fstest.MapFS{
			a + "0.txt":                              file(seqs(0, 99)),
			".part-1b3c5f7e-0-1.txt.inprogress.77aa": file(seqs(100, 130)), // the crash cut this one
			b + "0.txt":                              file(seqs(100, 180)),
		},
		want: Report{Files: 2, Records: 181, Max: 180, Expected: 181, FirstMissing: -1, FirstDuplicated: -1,
			UncommittedFiles: 1, Uncommitted: 31, Reprocessed: 31},
	}, {
		name: "restored from an older checkpoint: records committed twice",
		fs: fstest.MapFS{
			a + "0.txt": file(seqs(0, 49)), a + "1.txt": file(seqs(50, 99)),
			b + "0.txt": file(seqs(50, 120)),
		},
		want: Report{Files: 3, Records: 171, Max: 120, Expected: 121, Duplicated: 50, FirstMissing: -1, FirstDuplicated: 50},
	}, {
		name: "a fresh start: everything committed again from 0",
		fs: fstest.MapFS{
			a + "0.txt": file(seqs(0, 99)),
			b + "0.txt": file(seqs(0, 30)),
		},
		want: Report{Files: 2, Records: 131, Max: 99, Expected: 100, Duplicated: 31, FirstMissing: -1, FirstDuplicated: 0},
	}, {
		name: "a skipped range",
		fs: fstest.MapFS{
			a + "0.txt": file(seqs(0, 99)),
			b + "0.txt": file(seqs(110, 150)),
		},
		want: Report{Files: 2, Records: 141, Max: 150, Expected: 151, Missing: 10, FirstMissing: 100, FirstDuplicated: -1},
	}, {
		name: "a crash cut the last line of an open file; committed files in a bucket folder count too",
		fs: fstest.MapFS{
			"2026-12-04--10/" + a + "0.txt": file(seqs(0, 9)),
			p + "0.txt.inprogress.1":        file(seqs(10, 11) + "1"),
		},
		want: Report{Files: 1, Records: 10, Max: 9, Expected: 10, FirstMissing: -1, FirstDuplicated: -1,
			UncommittedFiles: 1, Uncommitted: 2},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Verify(tt.fs)
			if err != nil {
				t.Fatal(err)
			}
			got.Writers = nil // TestWriters
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Verify:\n got %+v\nwant %+v", got, tt.want)
			}
			if got.OK() != (tt.want.Missing == 0 && tt.want.Duplicated == 0) {
				t.Errorf("OK() = %v for %v", got.OK(), got)
			}
		})
	}
}

func TestVerifyRefusesADirectoryThatIsNotTheJobsOutput(t *testing.T) {
	_, err := Verify(fstest.MapFS{"part-0-0.txt": file("0\n1\nhello\n")})
	if err == nil || !strings.Contains(err.Error(), "part-0-0.txt:3") {
		t.Fatalf("want an error naming part-0-0.txt:3, got %v", err)
	}
}

func TestVerifyAMissingDirectoryIsEmpty(t *testing.T) {
	got, err := Verify(os.DirFS(filepath.Join(t.TempDir(), "not-yet")))
	if err != nil {
		t.Fatal(err)
	}
	if got.Max != -1 || got.Files != 0 || !got.OK() {
		t.Fatalf("got %+v", got)
	}
}

func TestWriters(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	at := func(s string, sec int) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(s), ModTime: t0.Add(time.Duration(sec) * time.Second)}
	}
	// FileSink's names: part-<uuid of the bucket writer>-<n>.txt.
	const (
		a = "part-1b3c5f7e-0000-4000-8000-000000000000" // the first incarnation
		b = "part-9d8e7f6a-0000-4000-8000-000000000001" // the one after it
	)
	tests := []struct {
		name     string
		fs       fstest.MapFS
		writers  []Writer
		overlaps int
	}{{
		name: "a failover that stopped the old job first: the windows follow each other",
		fs: fstest.MapFS{
			a + "-0.txt": at(seqs(0, 9), 2), a + "-1.txt": at(seqs(10, 19), 4),
			".part-x-2.txt.inprogress.1": at(seqs(20, 21), 5),
			b + "-0.txt":                 at(seqs(20, 29), 30), b + "-10.txt": at(seqs(30, 39), 32),
		},
		writers: []Writer{
			{ID: a, Files: 2, Records: 20, First: 0, Last: 19, Start: t0.Add(2 * time.Second), End: t0.Add(4 * time.Second)},
			{ID: b, Files: 2, Records: 20, First: 20, Last: 39, Start: t0.Add(30 * time.Second), End: t0.Add(32 * time.Second)},
		},
	}, {
		name: "two jobs write at once (a partitioned member's job goes on)",
		fs: fstest.MapFS{
			a + "-0.txt": at(seqs(0, 9), 2), a + "-1.txt": at(seqs(10, 19), 40),
			b + "-0.txt": at(seqs(10, 15), 30), b + "-1.txt": at(seqs(16, 25), 42),
		},
		writers: []Writer{
			{ID: a, Files: 2, Records: 20, First: 0, Last: 19, Start: t0.Add(2 * time.Second), End: t0.Add(40 * time.Second)},
			{ID: b, Files: 2, Records: 16, First: 10, Last: 25, Start: t0.Add(30 * time.Second), End: t0.Add(42 * time.Second)},
		},
		overlaps: 1,
	}, {
		name: "a file name that is not FileSink's is a writer of its own",
		fs:   fstest.MapFS{"2026-12-04--10/output.txt": at(seqs(0, 4), 1)},
		writers: []Writer{
			{ID: "output.txt", Files: 1, Records: 5, First: 0, Last: 4, Start: t0.Add(time.Second), End: t0.Add(time.Second)},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Verify(tt.fs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Writers, tt.writers) {
				t.Errorf("Writers:\n got %+v\nwant %+v", got.Writers, tt.writers)
			}
			if o := got.Overlaps(); len(o) != tt.overlaps {
				t.Errorf("Overlaps() = %q, want %d", o, tt.overlaps)
			}
		})
	}
}
