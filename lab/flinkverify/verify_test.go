package flinkverify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
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
			if got != tt.want {
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
