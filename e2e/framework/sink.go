package framework

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/flinkverify"
)

// The Flink scenarios' measuring points outside the code under test: the
// committed output of the job's FileSink (lab/flinkverify) and the checkpoint
// store's own listing. Neither goes through the restore webhook or its locator.

// FlinkOutputURI is the --output-dir of FlinkDeployment namespace/name in the
// lab: a directory every member's Flink processes reach ("" when the lab has
// none, e.g. the kind lab).
func (l *Lab) FlinkOutputURI(namespace, name string) string {
	if l.State.FlinkOutputDir == "" {
		return ""
	}
	return (&url.URL{Scheme: "file", Path: filepath.Join(l.State.FlinkOutputDir, namespace, name)}).String()
}

// VerifyFlinkOutput reads the committed output of FlinkDeployment namespace/name.
func (l *Lab) VerifyFlinkOutput(namespace, name string) (flinkverify.Report, error) {
	if l.State.FlinkOutputDir == "" {
		return flinkverify.Report{}, fmt.Errorf("the %s lab has no Flink output directory", l.ProviderName())
	}
	return flinkverify.Verify(os.DirFS(filepath.Join(l.State.FlinkOutputDir, namespace, name)))
}

// SetFlinkOutput makes FlinkDeployment fd write its committed output to uri.
func SetFlinkOutput(fd map[string]interface{}, uri string) {
	job := fd["spec"].(map[string]interface{})["job"].(map[string]interface{})
	job["args"] = append(job["args"].([]interface{}), "--output-dir", uri)
}

// CheckpointStore lists the lab's S3 store directly.
type CheckpointStore struct {
	Endpoint, Region, AccessKey, SecretKey string
}

// client is an S3 client of the store with its credentials.
func (s *CheckpointStore) client() *s3.Client { return s.credentials().Client() }

var chkMetadata = regexp.MustCompile(`/chk-(\d+)/_metadata$`)

// LatestCompleted returns the highest N with <dir>/<jobID>/chk-N/_metadata in
// the store (Flink writes _metadata last: a checkpoint without it is not
// complete), and -1 when there is none. dir is an s3://bucket/prefix URI.
func (s *CheckpointStore) LatestCompleted(ctx context.Context, dir, jobID string) (int64, error) {
	u, err := url.Parse(dir)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return -1, fmt.Errorf("checkpoint directory %q: want s3://bucket/prefix", dir)
	}
	client := s.client()
	prefix := strings.Trim(u.Path, "/") + "/" + jobID + "/"
	latest := int64(-1)
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(u.Host), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return -1, fmt.Errorf("listing s3://%s/%s: %w", u.Host, prefix, err)
		}
		for _, o := range page.Contents {
			if m := chkMetadata.FindStringSubmatch(aws.ToString(o.Key)); m != nil {
				if n, _ := strconv.ParseInt(m[1], 10, 64); n > latest {
					latest = n
				}
			}
		}
	}
	return latest, nil
}

// Savepoints returns the completed savepoints of jobID under dir (an
// s3://bucket/prefix URI): the directories savepoint-<first 6 characters of
// the job id>-<random> holding a _metadata file, as URIs.
func (s *CheckpointStore) Savepoints(ctx context.Context, dir, jobID string) ([]string, error) {
	u, err := url.Parse(dir)
	if err != nil || u.Scheme != "s3" || u.Host == "" || len(jobID) < 6 {
		return nil, fmt.Errorf("savepoint directory %q of job %q: want s3://bucket/prefix and a job id", dir, jobID)
	}
	client := s.client()
	base := strings.Trim(u.Path, "/") + "/"
	prefix := base + "savepoint-" + jobID[:6] + "-"
	var out []string
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(u.Host), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing s3://%s/%s: %w", u.Host, prefix, err)
		}
		for _, o := range page.Contents {
			if sp, ok := strings.CutSuffix(aws.ToString(o.Key), "/_metadata"); ok && !strings.Contains(strings.TrimPrefix(sp, base), "/") {
				out = append(out, "s3://"+u.Host+"/"+sp)
			}
		}
	}
	return out, nil
}

// ReplicationLag hides a state file of the newest completed checkpoint under
// jobDir (s3://bucket/<checkpoint dir>/<job id>), as a replica of the store
// that has the checkpoint's _metadata but not yet that file (lab.ReplicationLag).
func (s *CheckpointStore) ReplicationLag(ctx context.Context, jobDir string) (lab.Lag, error) {
	return lab.ReplicationLag(ctx, s.credentials(), jobDir)
}

// CatchUp puts back the state file ReplicationLag hid.
func (s *CheckpointStore) CatchUp(ctx context.Context, l lab.Lag) error {
	return l.CatchUp(ctx, s.credentials())
}

func (s *CheckpointStore) credentials() *lab.S3Credentials {
	return &lab.S3Credentials{Endpoint: s.Endpoint, Region: s.Region, AccessKey: s.AccessKey, SecretKey: s.SecretKey}
}

// Completed returns the N of every <dir>/<jobID>/chk-N/_metadata in the
// store, ascending.
func (s *CheckpointStore) Completed(ctx context.Context, dir, jobID string) ([]int64, error) {
	u, err := url.Parse(dir)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("checkpoint directory %q: want s3://bucket/prefix", dir)
	}
	prefix := strings.Trim(u.Path, "/") + "/" + jobID + "/"
	var ids []int64
	p := s3.NewListObjectsV2Paginator(s.client(), &s3.ListObjectsV2Input{Bucket: aws.String(u.Host), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing s3://%s/%s: %w", u.Host, prefix, err)
		}
		for _, o := range page.Contents {
			if m := chkMetadata.FindStringSubmatch(aws.ToString(o.Key)); m != nil {
				n, _ := strconv.ParseInt(m[1], 10, 64)
				ids = append(ids, n)
			}
		}
	}
	slices.Sort(ids)
	return ids, nil
}
