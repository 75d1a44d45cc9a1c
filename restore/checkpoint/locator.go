package checkpoint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"golang.org/x/sync/errgroup"
)

// MetadataFile is the file whose presence marks a checkpoint as completed.
const MetadataFile = "_metadata"

// Defaults of Store.
const (
	// DefaultMaxCheckpointDirs bounds the chk-N directories examined for one
	// job. Flink keeps execution.checkpointing.num-retained completed
	// checkpoints (default 1) plus the ones in progress.
	DefaultMaxCheckpointDirs = 1000
	// DefaultStatConcurrency is the number of _metadata look-ups in flight.
	DefaultStatConcurrency = 8
	// DefaultMaxJobDirs bounds the job directories examined under one
	// checkpoint directory (one per job incarnation of the deployment).
	DefaultMaxJobDirs = 100
	// DefaultMaxStateFiles bounds the state files confirmed for one
	// checkpoint; one with more is chosen unverified.
	DefaultMaxStateFiles = 100000
	// DefaultMaxSkipped bounds the completed checkpoints found not
	// restorable before the locator gives up (Flink keeps
	// execution.checkpointing.num-retained of them).
	DefaultMaxSkipped = 10
	// DefaultListThreshold is the number of referenced files in one
	// directory from which the directory is listed (1,000 names a request)
	// rather than each file looked up (a request each).
	DefaultListThreshold = 100
)

// Checkpoint is a completed checkpoint.
type Checkpoint struct {
	// ID is N of chk-N.
	ID int64 `json:"checkpointId"`
	// SavepointPath is the chk-N directory URI, which Flink accepts as
	// execution.savepoint.path / spec.job.initialSavepointPath.
	SavepointPath string `json:"savepointPath"`
	// Completed is when chk-N/_metadata was written, as the store records it
	// (S3 Last-Modified, file modification time).
	Completed time.Time `json:"completed"`
	// JobID is the job the checkpoint belongs to (its directory under the
	// checkpoint directory).
	JobID string `json:"jobId"`
	// Savepoint: a savepoint (LatestSavepoint), not a chk-N directory; ID is
	// then 0 (its name does not carry the checkpoint id).
	Savepoint bool `json:"savepoint,omitempty"`
	// Skipped are the newer completed checkpoints or savepoints passed over
	// because they cannot be restored (Store.VerifyStateFiles), newest first.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Unverified says why the state files of this checkpoint were not
	// confirmed (an unknown metadata format, more files than the bound, a
	// file outside the directory looked in); empty when they were, or when
	// verification is off.
	Unverified string `json:"unverified,omitempty"`
}

// Skipped is a completed checkpoint or savepoint that is not restorable.
type Skipped struct {
	SavepointPath string    `json:"savepointPath"`
	Completed     time.Time `json:"completed"`
	// Reason names what is wrong: the state files its _metadata references
	// that the store does not hold, or why _metadata cannot be read.
	Reason string `json:"reason"`
}

// String is "<path> (<reason>)".
func (s Skipped) String() string { return s.SavepointPath + " (" + s.Reason + ")" }

// Locator finds the latest completed checkpoint of a job.
type Locator interface {
	// LatestCompleted returns the completed checkpoint under
	// <checkpointDir>/<jobID>/ whose chk-N/_metadata was written last (the
	// highest N among equal times). It returns an error wrapping ErrNotFound
	// when there is none, ErrInvalid for bad input and any other error for
	// store failures (retriable).
	LatestCompleted(ctx context.Context, checkpointDir, jobID string) (Checkpoint, error)
	// CompletedAt returns when the savepoint or checkpoint at snapshotPath (a
	// directory, or its _metadata file) was completed, and ErrNotFound when it
	// has no _metadata.
	CompletedAt(ctx context.Context, snapshotPath string) (time.Time, error)
	// LatestCompletedInLineage returns the completed checkpoint written last
	// among every job under checkpointDir, a deployment's own checkpoint
	// directory: the job a failover carried and every job started after it
	// from its state, so that nothing older than the lineage's newest state
	// is restored. Errors as LatestCompleted.
	LatestCompletedInLineage(ctx context.Context, checkpointDir string) (Checkpoint, error)
	// LatestSavepoint returns the savepoint of jobID under savepointDir (the
	// deployment's state.savepoints.dir) whose _metadata was written last:
	// Flink names a job's savepoint directories
	// savepoint-<first 6 characters of the job id>-<random>. A stop with a
	// savepoint (a planned move, the operator's savepoint on deletion) leaves
	// the job's newest state there. Errors as LatestCompleted.
	LatestSavepoint(ctx context.Context, savepointDir, jobID string) (Checkpoint, error)
}

// S3API is the part of the S3 client the Store uses.
type S3API interface {
	s3.ListObjectsV2APIClient
	s3.HeadObjectAPIClient
	GetObject(ctx context.Context, params *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// Store is the default Locator: S3-compatible storage through S3 and local
// directories when AllowFile is set.
//
// On S3 it lists the chk-N "directories" of the job with a delimiter (one
// request per 1,000 checkpoints, however many state files they hold) and
// reads the _metadata object of each with HEAD, newest N first, a few at a
// time.
type Store struct {
	// S3 lists and stats objects; nil disables s3:// locations.
	S3 S3API
	// AllowFile enables file:// locations (read on the webhook's host).
	AllowFile bool
	// MaxCheckpointDirs bounds the chk-N directories examined per job; more
	// is an error. 0 means DefaultMaxCheckpointDirs.
	MaxCheckpointDirs int
	// StatConcurrency is the number of _metadata look-ups in flight; 0 means
	// DefaultStatConcurrency.
	StatConcurrency int
	// MaxJobDirs bounds the job directories examined under a checkpoint
	// directory by LatestCompletedInLineage; more is an error. 0 means
	// DefaultMaxJobDirs.
	MaxJobDirs int
	// VerifyStateFiles: a completed checkpoint is chosen only when every
	// state file its _metadata references exists in the store (at least as
	// large as the handle says). A replicated store can hold a checkpoint's
	// _metadata before the files it references (incremental checkpoints'
	// shared/ files); Flink fails to restore it and the job crash-loops. The
	// newest restorable one is chosen instead, and the ones passed over are
	// returned in Checkpoint.Skipped.
	VerifyStateFiles bool
	// MaxStateFiles bounds the files confirmed per checkpoint; 0 means
	// DefaultMaxStateFiles.
	MaxStateFiles int
	// MaxSkipped bounds the checkpoints found not restorable per look-up;
	// 0 means DefaultMaxSkipped.
	MaxSkipped int
	// ListThreshold: from this many referenced files in one directory, the
	// directory is listed instead of each file looked up; 0 means
	// DefaultListThreshold.
	ListThreshold int
}

var _ Locator = (*Store)(nil)

// candidate is a chk-N directory and, once looked up, the completion time of
// its _metadata.
type candidate struct {
	id        int64
	name      string
	completed time.Time
	complete  bool
}

// LatestCompleted implements Locator.
func (s *Store) LatestCompleted(ctx context.Context, checkpointDir, jobID string) (Checkpoint, error) {
	if err := ValidateJobID(jobID); err != nil {
		return Checkpoint{}, err
	}
	loc, err := ParseLocation(checkpointDir)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := s.supports(loc); err != nil {
		return Checkpoint{}, err
	}
	cps, err := s.jobCheckpoints(ctx, loc, jobID)
	if err != nil {
		return Checkpoint{}, err
	}
	return s.pick(ctx, cps, loc, "under "+loc.Join(jobID).String())
}

// jobCheckpoints returns the completed checkpoints of jobID under loc, not
// verified.
func (s *Store) jobCheckpoints(ctx context.Context, loc Location, jobID string) ([]Checkpoint, error) {
	jobDir := loc.Join(jobID)
	var cands []candidate
	var err error
	if loc.IsS3() {
		cands, err = s.s3Candidates(ctx, jobDir)
	} else {
		cands, err = s.fileCandidates(ctx, jobDir)
	}
	if err != nil {
		return nil, err
	}
	var cps []Checkpoint
	for _, c := range cands {
		if c.complete {
			cps = append(cps, Checkpoint{ID: c.id, SavepointPath: jobDir.Join(c.name).String(), Completed: c.completed, JobID: jobID})
		}
	}
	return cps, nil
}

// LatestCompletedInLineage implements Locator.
func (s *Store) LatestCompletedInLineage(ctx context.Context, checkpointDir string) (Checkpoint, error) {
	loc, err := ParseLocation(checkpointDir)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := s.supports(loc); err != nil {
		return Checkpoint{}, err
	}
	var jobs []string
	if loc.IsS3() {
		jobs, err = s.s3JobDirs(ctx, loc)
	} else {
		jobs, err = s.fileJobDirs(loc)
	}
	if err != nil {
		return Checkpoint{}, err
	}
	var all []Checkpoint
	for _, job := range jobs {
		cps, err := s.jobCheckpoints(ctx, loc, job)
		if err != nil {
			return Checkpoint{}, err
		}
		all = append(all, cps...)
	}
	return s.pick(ctx, all, loc, "of any job under "+loc.String())
}

// SavepointPrefix is the start of the name of Flink's savepoint directories
// of jobID (a valid job id): savepoint-<its first 6 characters>-.
func SavepointPrefix(jobID string) string { return "savepoint-" + jobID[:6] + "-" }

// LatestSavepoint implements Locator.
func (s *Store) LatestSavepoint(ctx context.Context, savepointDir, jobID string) (Checkpoint, error) {
	if err := ValidateJobID(jobID); err != nil {
		return Checkpoint{}, err
	}
	loc, err := ParseLocation(savepointDir)
	if err != nil {
		return Checkpoint{}, err
	}
	if err := s.supports(loc); err != nil {
		return Checkpoint{}, err
	}
	prefix := SavepointPrefix(jobID)
	var cands []candidate
	add := func(name string) error {
		if !strings.HasPrefix(name, prefix) || len(name) == len(prefix) {
			return nil
		}
		if limit := cmp.Or(s.MaxCheckpointDirs, DefaultMaxCheckpointDirs); len(cands) >= limit {
			return fmt.Errorf("%s holds more than %d savepoints of job %s; clean up old savepoints", loc, limit, jobID)
		}
		cands = append(cands, candidate{name: name})
		return nil
	}
	if loc.IsS3() {
		if err = s.s3SubDirs(ctx, loc, prefix, add); err == nil {
			err = s.stat(ctx, cands, func(ctx context.Context, c candidate) (time.Time, bool, error) {
				return headTime(ctx, s.S3, loc.Join(c.name, MetadataFile))
			})
		}
	} else {
		var entries []os.DirEntry
		entries, err = os.ReadDir(loc.Key)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = nil
		case err != nil:
			err = fmt.Errorf("reading %s: %w", loc.Key, err)
		}
		for _, e := range entries {
			if err = add(e.Name()); err != nil {
				break
			}
		}
		if err == nil {
			err = s.stat(ctx, cands, func(_ context.Context, c candidate) (time.Time, bool, error) {
				return statTime(filepath.Join(loc.Key, c.name, MetadataFile))
			})
		}
	}
	if err != nil {
		return Checkpoint{}, err
	}
	var cps []Checkpoint
	for _, c := range cands {
		if c.complete {
			cps = append(cps, Checkpoint{SavepointPath: loc.Join(c.name).String(), Completed: c.completed, JobID: jobID, Savepoint: true})
		}
	}
	return s.pick(ctx, cps, loc, fmt.Sprintf("of job %s (%s*/_metadata) under %s", jobID, prefix, loc))
}

// addJobDir appends name if it is a job id, enforcing the bound.
func (s *Store) addJobDir(jobs []string, dir Location, name string) ([]string, error) {
	if ValidateJobID(name) != nil {
		return jobs, nil
	}
	if limit := cmp.Or(s.MaxJobDirs, DefaultMaxJobDirs); len(jobs) >= limit {
		return nil, fmt.Errorf("%s holds more than %d job directories; is it one deployment's checkpoint directory?", dir, limit)
	}
	return append(jobs, name), nil
}

// s3JobDirs lists the <jobId>/ "directories" under dir.
func (s *Store) s3JobDirs(ctx context.Context, dir Location) ([]string, error) {
	var jobs []string
	err := s.s3SubDirs(ctx, dir, "", func(name string) (err error) {
		jobs, err = s.addJobDir(jobs, dir, name)
		return err
	})
	return jobs, err
}

// fileJobDirs reads the <jobId> directories of a local checkpoint directory.
func (s *Store) fileJobDirs(dir Location) ([]string, error) {
	entries, err := os.ReadDir(dir.Key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir.Key, err)
	}
	var jobs []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if jobs, err = s.addJobDir(jobs, dir, e.Name()); err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

// CompletedAt implements Locator.
func (s *Store) CompletedAt(ctx context.Context, snapshotPath string) (time.Time, error) {
	loc, err := ParseLocation(snapshotPath)
	if err != nil {
		return time.Time{}, err
	}
	if err := s.supports(loc); err != nil {
		return time.Time{}, err
	}
	if loc.Base() != MetadataFile {
		loc = loc.Join(MetadataFile)
	}
	var t time.Time
	var found bool
	if loc.IsS3() {
		t, found, err = headTime(ctx, s.S3, loc)
	} else {
		t, found, err = statTime(loc.Key)
	}
	switch {
	case err != nil:
		return time.Time{}, err
	case !found:
		return time.Time{}, fmt.Errorf("%w: %s does not exist", ErrNotFound, loc)
	}
	return t, nil
}

func (s *Store) supports(loc Location) error {
	switch {
	case loc.IsS3() && s.S3 == nil:
		return fmt.Errorf("%w: S3 locations are not configured in this locator", ErrInvalid)
	case !loc.IsS3() && !s.AllowFile:
		return fmt.Errorf("%w: file:// locations are disabled", ErrInvalid)
	}
	return nil
}

// pick returns the newest of the completed checkpoints cps (written last;
// among equal times the higher id, then the path, so that the answer is
// stable) that is restorable, with the newer ones it passed over. root is the
// directory looked in (state files are looked up only within it); where
// describes the look-up for ErrNotFound.
func (s *Store) pick(ctx context.Context, cps []Checkpoint, root Location, where string) (Checkpoint, error) {
	slices.SortFunc(cps, func(a, b Checkpoint) int {
		switch {
		case writtenLater(a.Completed, a.ID, b.Completed, b.ID):
			return -1
		case writtenLater(b.Completed, b.ID, a.Completed, a.ID):
			return 1
		}
		return strings.Compare(b.SavepointPath, a.SavepointPath)
	})
	var skipped []Skipped
	for _, cp := range cps {
		if !s.VerifyStateFiles {
			return cp, nil
		}
		if len(skipped) >= cmp.Or(s.MaxSkipped, DefaultMaxSkipped) {
			break
		}
		why, unverified, err := s.restorable(ctx, cp.SavepointPath, root)
		if err != nil {
			return Checkpoint{}, err
		}
		if why == "" {
			cp.Skipped, cp.Unverified = skipped, unverified
			return cp, nil
		}
		skipped = append(skipped, Skipped{SavepointPath: cp.SavepointPath, Completed: cp.Completed, Reason: why})
	}
	if len(skipped) > 0 {
		parts := make([]string, len(skipped))
		for i, sk := range skipped {
			parts[i] = sk.String()
		}
		return Checkpoint{Skipped: skipped}, fmt.Errorf("%w %s: %d completed but not restorable: %s", ErrNotRestorable, where, len(skipped), strings.Join(parts, "; "))
	}
	return Checkpoint{}, fmt.Errorf("%w %s", ErrNotFound, where)
}

// writtenLater tells whether checkpoint a (completed at ta, id a) was written
// after checkpoint b: a later completion, or the higher id among equal times.
func writtenLater(ta time.Time, a int64, tb time.Time, b int64) bool {
	return ta.After(tb) || (ta.Equal(tb) && a > b)
}

// parseChk parses "chk-<digits>" and returns N.
func parseChk(name string) (int64, bool) {
	digits, ok := strings.CutPrefix(name, "chk-")
	if !ok || digits == "" {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// addCandidate appends name if it is a chk-N directory, enforcing the bound.
func (s *Store) addCandidate(cands []candidate, jobDir Location, name string) ([]candidate, error) {
	n, ok := parseChk(name)
	if !ok {
		return cands, nil
	}
	if limit := cmp.Or(s.MaxCheckpointDirs, DefaultMaxCheckpointDirs); len(cands) >= limit {
		return nil, fmt.Errorf("%s holds more than %d chk-N directories; lower execution.checkpointing.num-retained or clean up old checkpoints", jobDir, limit)
	}
	return append(cands, candidate{id: n, name: name}), nil
}

// stat looks up the _metadata of every candidate, newest N first, a few at a
// time, and records which are complete.
func (s *Store) stat(ctx context.Context, cands []candidate, lookup func(ctx context.Context, c candidate) (time.Time, bool, error)) error {
	slices.SortFunc(cands, func(a, b candidate) int { return cmp.Compare(b.id, a.id) })
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(cmp.Or(s.StatConcurrency, DefaultStatConcurrency))
	for i := range cands {
		g.Go(func() error {
			t, ok, err := lookup(gctx, cands[i])
			cands[i].completed, cands[i].complete = t, ok
			return err
		})
	}
	return g.Wait()
}

// s3Candidates lists <jobDir>/chk-*/ and HEADs each chk-N/_metadata.
func (s *Store) s3Candidates(ctx context.Context, jobDir Location) ([]candidate, error) {
	var cands []candidate
	err := s.s3SubDirs(ctx, jobDir, "chk-", func(name string) (err error) {
		cands, err = s.addCandidate(cands, jobDir, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	err = s.stat(ctx, cands, func(ctx context.Context, c candidate) (time.Time, bool, error) {
		return headTime(ctx, s.S3, jobDir.Join(c.name, MetadataFile))
	})
	return cands, err
}

// s3SubDirs lists the "directories" <dir>/<namePrefix>…/ with a delimiter and
// calls visit once for each name. Keys listed as objects rather than common
// prefixes (a store that ignores the delimiter) name their directory too.
func (s *Store) s3SubDirs(ctx context.Context, dir Location, namePrefix string, visit func(name string) error) error {
	prefix := dir.Key + "/"
	p := s3.NewListObjectsV2Paginator(s.S3, &s3.ListObjectsV2Input{
		Bucket:    aws.String(dir.Bucket),
		Prefix:    aws.String(prefix + namePrefix),
		Delimiter: aws.String("/"),
		// XML 1.0 cannot carry control characters: ask for URL-encoded names.
		EncodingType: types.EncodingTypeUrl,
	})
	seen := map[string]bool{}
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing s3://%s/%s%s: %w", dir.Bucket, prefix, namePrefix, err)
		}
		listed := make([]string, 0, len(page.CommonPrefixes)+len(page.Contents))
		for _, cp := range page.CommonPrefixes {
			listed = append(listed, aws.ToString(cp.Prefix))
		}
		for _, obj := range page.Contents {
			listed = append(listed, aws.ToString(obj.Key))
		}
		for _, l := range listed {
			key, err := listedName(l, page.EncodingType)
			if err != nil {
				return fmt.Errorf("listing s3://%s/%s%s: %w", dir.Bucket, prefix, namePrefix, err)
			}
			rest, under := strings.CutPrefix(key, prefix)
			name, _, isDir := strings.Cut(rest, "/")
			if !under || !isDir || seen[name] {
				continue
			}
			seen[name] = true
			if err := visit(name); err != nil {
				return err
			}
		}
	}
	return nil
}

// listedName decodes a key or prefix of a listing; stores that ignore
// encoding-type=url say so by not echoing it, and their names are raw.
func listedName(name string, enc types.EncodingType) (string, error) {
	if enc != types.EncodingTypeUrl {
		return name, nil
	}
	return url.QueryUnescape(name)
}

// headTime returns the Last-Modified time of an S3 object; found is false
// when it does not exist.
func headTime(ctx context.Context, client s3.HeadObjectAPIClient, obj Location) (t time.Time, found bool, err error) {
	out, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(obj.Bucket), Key: aws.String(obj.Key)})
	var re *awshttp.ResponseError
	switch {
	case errors.As(err, &re) && re.HTTPStatusCode() == 404:
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, fmt.Errorf("reading %s: %w", obj, err)
	}
	return aws.ToTime(out.LastModified), true, nil
}

// fileCandidates scans a local job directory.
func (s *Store) fileCandidates(ctx context.Context, jobDir Location) ([]candidate, error) {
	entries, err := os.ReadDir(jobDir.Key)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", jobDir.Key, err)
	}
	var cands []candidate
	for _, e := range entries {
		if cands, err = s.addCandidate(cands, jobDir, e.Name()); err != nil {
			return nil, err
		}
	}
	err = s.stat(ctx, cands, func(_ context.Context, c candidate) (time.Time, bool, error) {
		return statTime(filepath.Join(jobDir.Key, c.name, MetadataFile))
	})
	return cands, err
}

// statTime returns the modification time of a regular file; found is false
// when there is none (a missing file or a directory named _metadata).
func statTime(name string) (t time.Time, found bool, err error) {
	st, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, fmt.Errorf("reading %s: %w", name, err)
	case !st.Mode().IsRegular():
		return time.Time{}, false, nil
	}
	return st.ModTime(), true, nil
}
