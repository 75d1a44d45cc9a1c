package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// MetadataFile is the file whose presence marks a checkpoint as completed.
const MetadataFile = "_metadata"

// Checkpoint is a completed checkpoint.
type Checkpoint struct {
	// ID is N of chk-N.
	ID int64 `json:"checkpointId"`
	// SavepointPath is the chk-N directory URI, which Flink accepts as
	// execution.savepoint.path / spec.job.initialSavepointPath.
	SavepointPath string `json:"savepointPath"`
}

// Locator finds the latest completed checkpoint of a job.
type Locator interface {
	// LatestCompleted returns the checkpoint with the highest N such that
	// <checkpointDir>/<jobID>/chk-N/_metadata exists. It returns an error
	// wrapping ErrNotFound when there is none, ErrInvalid for bad input and
	// any other error for store failures (retriable).
	LatestCompleted(ctx context.Context, checkpointDir, jobID string) (Checkpoint, error)
}

// Store is the default Locator: S3-compatible storage through S3 and local
// directories when AllowFile is set.
type Store struct {
	// S3 lists objects; nil disables s3:// locations.
	S3 s3.ListObjectsV2APIClient
	// AllowFile enables file:// locations (read on the webhook's host).
	AllowFile bool
}

var _ Locator = (*Store)(nil)

// LatestCompleted implements Locator.
func (s *Store) LatestCompleted(ctx context.Context, checkpointDir, jobID string) (Checkpoint, error) {
	if err := ValidateJobID(jobID); err != nil {
		return Checkpoint{}, err
	}
	loc, err := ParseLocation(checkpointDir)
	if err != nil {
		return Checkpoint{}, err
	}
	jobDir := loc.Join(jobID)
	var id int64
	var dir string
	if loc.IsS3() {
		if s.S3 == nil {
			return Checkpoint{}, fmt.Errorf("%w: S3 locations are not configured in this locator", ErrInvalid)
		}
		id, dir, err = latestS3(ctx, s.S3, jobDir)
	} else {
		if !s.AllowFile {
			return Checkpoint{}, fmt.Errorf("%w: file:// locations are disabled", ErrInvalid)
		}
		id, dir, err = latestFile(jobDir.Key)
	}
	if err != nil {
		return Checkpoint{}, err
	}
	if dir == "" {
		return Checkpoint{}, fmt.Errorf("%w under %s", ErrNotFound, jobDir)
	}
	return Checkpoint{ID: id, SavepointPath: jobDir.Join(dir).String()}, nil
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

// latestS3 lists <jobDir>/chk- and returns the highest N (and the "chk-N"
// segment as written in the store) among keys <jobDir>/chk-N/_metadata.
func latestS3(ctx context.Context, client s3.ListObjectsV2APIClient, jobDir Location) (int64, string, error) {
	prefix := jobDir.Key + "/chk-"
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{
		Bucket: aws.String(jobDir.Bucket),
		Prefix: aws.String(prefix),
	})
	best, bestDir := int64(-1), ""
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, "", fmt.Errorf("listing s3://%s/%s: %w", jobDir.Bucket, prefix, err)
		}
		for _, obj := range page.Contents {
			rest, ok := strings.CutPrefix(aws.ToString(obj.Key), jobDir.Key+"/")
			if !ok {
				continue
			}
			dir, file, ok := strings.Cut(rest, "/")
			if !ok || file != MetadataFile {
				continue
			}
			if n, ok := parseChk(dir); ok && n > best {
				best, bestDir = n, dir
			}
		}
	}
	if bestDir == "" {
		return 0, "", nil
	}
	return best, bestDir, nil
}

// latestFile scans a local job directory.
func latestFile(jobDir string) (int64, string, error) {
	entries, err := os.ReadDir(jobDir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("reading %s: %w", jobDir, err)
	}
	best, bestDir := int64(-1), ""
	for _, e := range entries {
		n, ok := parseChk(e.Name())
		if !ok || n <= best {
			continue
		}
		st, err := os.Stat(filepath.Join(jobDir, e.Name(), MetadataFile))
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		best, bestDir = n, e.Name()
	}
	if bestDir == "" {
		return 0, "", nil
	}
	return best, bestDir, nil
}
