// Package flinkverify checks the committed output of the lab's Flink job
// (lab/flink): the job writes its sequence 0, 1, 2, … one number per line with
// Flink's FileSink, and a part file becomes visible under its final name only
// when the checkpoint covering its records completes. Reading only those
// committed part files, across every incarnation of the job on every member,
// tells a user what the failovers did to the output, independently of the job's
// own metrics and of the restore that chose its checkpoint:
//
//   - a restore from an older checkpoint than the latest completed one commits
//     records again: duplicated > 0;
//   - a fresh start instead of a restore commits everything again from 0:
//     duplicated > 0;
//   - a skipped range (a restore past what was committed) leaves missing > 0;
//   - two instances writing at once commit the same records twice: duplicated > 0.
//
// Files whose name starts with '.' or '_' are not committed (FileSink's
// in-progress and pending files are hidden). Records in such files that a
// later incarnation committed are the work the failover redid (reprocessed).
package flinkverify

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Report is what the committed output says about the run so far.
type Report struct {
	// Files and Records count the committed part files and the records in them.
	Files   int   `json:"files"`
	Records int64 `json:"records"`
	// Max is the highest committed sequence number, -1 when none is committed.
	Max int64 `json:"max"`
	// Expected is the number of records a run without loss or duplication has
	// committed up to Max: Max+1.
	Expected int64 `json:"expected"`
	// Missing counts the sequence numbers in [0, Max] that no committed file
	// holds; Duplicated counts the extra copies of the ones committed more than
	// once (a number committed three times counts 2).
	Missing    int64 `json:"missing"`
	Duplicated int64 `json:"duplicated"`
	// FirstMissing and FirstDuplicated are the lowest such numbers, -1 when none.
	FirstMissing    int64 `json:"firstMissing"`
	FirstDuplicated int64 `json:"firstDuplicated"`
	// UncommittedFiles and Uncommitted count the hidden (in-progress or
	// pending) part files and their complete lines.
	UncommittedFiles int   `json:"uncommittedFiles"`
	Uncommitted      int64 `json:"uncommitted"`
	// Reprocessed counts the records written to an uncommitted file that a
	// committed file holds too: output an incarnation produced and never
	// committed, produced again by the one restored after it.
	Reprocessed int64 `json:"reprocessed"`
	// Writers are the sink writers that committed files, ordered by the time
	// they started committing. FileSink names its part files
	// <prefix>-<uuid>-<n><suffix> with a uuid per bucket writer: one per
	// subtask of each job incarnation (the lab's job runs one subtask, so one
	// writer per incarnation).
	Writers []Writer `json:"writers,omitempty"`
}

// Writer is one sink writer's committed output: the sequence numbers it
// covered and the window in which it wrote them (the modification times of its
// committed part files: a commit renames a file and keeps that time).
type Writer struct {
	ID      string    `json:"id"`
	Files   int       `json:"files"`
	Records int64     `json:"records"`
	First   int64     `json:"first"`
	Last    int64     `json:"last"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
}

// Overlaps lists the pairs of writers whose windows overlap. For a job with
// one sink subtask (the lab's), that is two instances of the job writing at
// once: writers that follow each other (a failover that stopped the old job
// before the new one started) never overlap. With more subtasks, the writers
// of one incarnation overlap each other too.
func (r Report) Overlaps() []string {
	var out []string
	for i, a := range r.Writers {
		for _, b := range r.Writers[i+1:] {
			if !a.End.Before(b.Start) && !b.End.Before(a.Start) {
				out = append(out, fmt.Sprintf("%s [%s, %s] and %s [%s, %s]", a.ID, a.Start.Format(time.RFC3339Nano),
					a.End.Format(time.RFC3339Nano), b.ID, b.Start.Format(time.RFC3339Nano), b.End.Format(time.RFC3339Nano)))
			}
		}
	}
	return out
}

// partFile splits a committed part file's name <prefix>-<uuid>-<n><suffix>
// into its writer, <prefix>-<uuid>, and the rest.
var partFile = regexp.MustCompile(`^(.+)-\d+(\.[^.-]*)?$`)

// OK reports whether every sequence up to Max is committed exactly once.
func (r Report) OK() bool { return r.Missing == 0 && r.Duplicated == 0 }

// String is the one-line summary `lab flink verify` prints.
func (r Report) String() string {
	return fmt.Sprintf("expected=%d missing=%d duplicated=%d max=%d (committed: %d records in %d files; uncommitted: %d records in %d files; reprocessed=%d)",
		r.Expected, r.Missing, r.Duplicated, r.Max, r.Records, r.Files, r.Uncommitted, r.UncommittedFiles, r.Reprocessed)
}

// Committed reports whether a part file name is a committed one.
func Committed(name string) bool {
	return !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_")
}

// attempts bounds the re-reads when files vanish while being read (a pending
// file renamed by a commit in between).
const attempts = 5

// Verify reads every part file under fsys (the output directory of one
// FlinkDeployment) and reports on the committed ones. A directory that does
// not exist yet reads as empty. A committed file with a line that is not a
// sequence number is an error: the directory is not the job's output.
func Verify(fsys fs.FS) (Report, error) {
	var err error
	for i := 0; i < attempts; i++ {
		var r Report
		r, err = read(fsys)
		if !errors.Is(err, errChanged) {
			return r, err
		}
	}
	return Report{}, fmt.Errorf("the output kept changing while it was read (%d attempts): %w", attempts, err)
}

var errChanged = errors.New("a part file vanished while the output was read")

func read(fsys fs.FS) (Report, error) {
	committed := map[int64]int{}
	uncommitted := map[int64]struct{}{}
	writers := map[string]*Writer{}
	r := Report{Max: -1, FirstMissing: -1, FirstDuplicated: -1}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			if errors.Is(err, fs.ErrNotExist) {
				return errChanged
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		ok := Committed(path.Base(p))
		var w *Writer
		if ok {
			r.Files++
			info, err := d.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return errChanged
			}
			if err != nil {
				return err
			}
			w = writerOf(writers, path.Base(p), info.ModTime())
		} else {
			r.UncommittedFiles++
		}
		return readFile(fsys, p, ok, func(seq int64) {
			if ok {
				committed[seq]++
				r.Records++
				w.add(seq)
			} else {
				uncommitted[seq] = struct{}{}
				r.Uncommitted++
			}
		})
	})
	if err != nil {
		return Report{}, err
	}
	for seq, n := range committed {
		if seq > r.Max {
			r.Max = seq
		}
		if n > 1 {
			r.Duplicated += int64(n - 1)
			if r.FirstDuplicated < 0 || seq < r.FirstDuplicated {
				r.FirstDuplicated = seq
			}
		}
	}
	for seq := range uncommitted {
		if committed[seq] > 0 {
			r.Reprocessed++
		}
	}
	for _, w := range writers {
		r.Writers = append(r.Writers, *w)
	}
	sort.Slice(r.Writers, func(i, j int) bool {
		a, b := r.Writers[i], r.Writers[j]
		if !a.Start.Equal(b.Start) {
			return a.Start.Before(b.Start)
		}
		return a.ID < b.ID
	})
	r.Expected = r.Max + 1
	r.Missing = r.Expected - int64(len(committed))
	if r.Missing > 0 {
		seqs := make([]int64, 0, len(committed))
		for seq := range committed {
			seqs = append(seqs, seq)
		}
		sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
		r.FirstMissing = int64(len(seqs))
		for i, seq := range seqs {
			if seq != int64(i) {
				r.FirstMissing = int64(i)
				break
			}
		}
	}
	return r, nil
}

// writerOf returns the writer of committed part file name, with its window
// widened to modTime.
func writerOf(writers map[string]*Writer, name string, modTime time.Time) *Writer {
	id := name
	if m := partFile.FindStringSubmatch(name); m != nil {
		id = m[1]
	}
	w := writers[id]
	if w == nil {
		w = &Writer{ID: id, First: -1, Last: -1, Start: modTime, End: modTime}
		writers[id] = w
	}
	w.Files++
	if modTime.Before(w.Start) {
		w.Start = modTime
	}
	if modTime.After(w.End) {
		w.End = modTime
	}
	return w
}

func (w *Writer) add(seq int64) {
	w.Records++
	if w.First < 0 || seq < w.First {
		w.First = seq
	}
	if seq > w.Last {
		w.Last = seq
	}
}

// readFile calls add for every sequence number in file p. In an uncommitted
// file the last line may be cut short by a crash: a line without its newline is
// ignored there.
func readFile(fsys fs.FS, p string, committed bool, add func(int64)) error {
	f, err := fsys.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return errChanged
	}
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	for line := 1; ; line++ {
		s, err := br.ReadString('\n')
		if err != nil && s == "" {
			return nil
		}
		if err != nil && !committed {
			return nil // a partly written last line of an in-progress file
		}
		s = strings.TrimSuffix(s, "\n")
		seq, perr := strconv.ParseInt(s, 10, 64)
		if perr != nil || seq < 0 {
			if !committed {
				return nil
			}
			return fmt.Errorf("%s:%d: %q is not a sequence number: not the lab job's output", p, line, s)
		}
		add(seq)
		if err != nil {
			return nil // last line of a committed file without a newline
		}
	}
}
