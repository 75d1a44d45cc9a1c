package lab

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The replication-lag fault. Across regions the checkpoint store is
// replicated object by object, and a checkpoint's _metadata can arrive before
// the state files it references: a restore from it fails (Flink cannot open a
// file its metadata names) and the job crash-loops. The lab plays the replica
// that is behind: it hides one state file of a job's newest completed
// checkpoint from the store (moved aside, under ParkedPrefix) until CatchUp
// puts it back. The file is chosen from the store's listing of the
// checkpoint's directory, not from its _metadata: the fault does not use the
// restore's own reading of Flink's format. Flink 1.20 keeps small state inside
// _metadata (execution.checkpointing.data-inline-threshold, 20 KiB): a job
// whose checkpoints have no file besides _metadata cannot lag this way.

// ParkedPrefix is where a hidden state file waits in the lab's bucket.
const ParkedPrefix = ".lab-replication-lag/"

// Lag is one hidden state file.
type Lag struct {
	// Checkpoint is the chk-N directory whose state file is hidden, and ID its N.
	Checkpoint string `json:"checkpoint"`
	ID         int64  `json:"checkpointId"`
	// File is the hidden state file, Parked where it is kept meanwhile.
	File   string `json:"file"`
	Parked string `json:"parked"`
}

var chkMetadataKey = regexp.MustCompile(`(^|/)chk-(\d+)/_metadata$`)

// Client is a path-style S3 client of the lab's store with its keys, as
// SeaweedFS and MinIO serve buckets; checksums only when an operation needs
// them (S3-compatible stores may reject the newer ones).
func (c *S3Credentials) Client() *s3.Client {
	return s3.New(s3.Options{
		Region: c.Region, UsePathStyle: true, BaseEndpoint: aws.String(c.Endpoint),
		Credentials:                credentials.NewStaticCredentialsProvider(c.AccessKey, c.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

// s3Client is Client, or an error when the store is not reachable from this host.
func (c *S3Credentials) s3Client() (*s3.Client, error) {
	if c.Endpoint == "" {
		return nil, fmt.Errorf("the lab's S3 store is not reachable from this host")
	}
	return c.Client(), nil
}

// ReplicationLag hides a state file of the newest completed checkpoint under
// jobDir (s3://bucket/<checkpoint dir>/<job id>, in the lab's store).
func ReplicationLag(ctx context.Context, c *S3Credentials, jobDir string) (Lag, error) {
	u, err := url.Parse(jobDir)
	if err != nil || u.Scheme != "s3" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
		return Lag{}, fmt.Errorf("job directory %q: want s3://bucket/<checkpoint dir>/<job id>", jobDir)
	}
	client, err := c.s3Client()
	if err != nil {
		return Lag{}, err
	}
	bucket, prefix := u.Host, strings.Trim(u.Path, "/")+"/"
	keys, err := listKeys(ctx, client, bucket, prefix)
	if err != nil {
		return Lag{}, err
	}
	newest := int64(-1)
	for _, k := range keys {
		if m := chkMetadataKey.FindStringSubmatch(strings.TrimPrefix(k, prefix)); m != nil && m[1] == "" {
			if n, err := strconv.ParseInt(m[2], 10, 64); err == nil && n > newest {
				newest = n
			}
		}
	}
	if newest < 0 {
		return Lag{}, fmt.Errorf("no completed checkpoint (chk-N/_metadata) under %s", jobDir)
	}
	chk := fmt.Sprintf("%schk-%d/", prefix, newest)
	var files []string
	for _, k := range keys {
		if rest, ok := strings.CutPrefix(k, chk); ok && rest != "_metadata" && !strings.Contains(rest, "/") {
			files = append(files, k)
		}
	}
	if len(files) == 0 {
		return Lag{}, fmt.Errorf("s3://%s/%s holds no state file besides _metadata: the job's state is inlined "+
			"(set execution.checkpointing.data-inline-threshold: 0 to write it to files)", bucket, chk)
	}
	slices.Sort(files)
	key := files[0]
	lag := Lag{
		Checkpoint: "s3://" + bucket + "/" + strings.TrimSuffix(chk, "/"), ID: newest,
		File: "s3://" + bucket + "/" + key, Parked: "s3://" + bucket + "/" + ParkedPrefix + key,
	}
	if err := moveObject(ctx, client, bucket, key, ParkedPrefix+key); err != nil {
		return Lag{}, err
	}
	return lag, nil
}

// CatchUp puts the hidden file back: the replica caught up.
func (l Lag) CatchUp(ctx context.Context, c *S3Credentials) error {
	client, err := c.s3Client()
	if err != nil {
		return err
	}
	bucket, from, ok := splitS3(l.Parked)
	fileBucket, to, ok2 := splitS3(l.File)
	if !ok || !ok2 || bucket != fileBucket || from != ParkedPrefix+to {
		return fmt.Errorf("not a replication lag of this lab: %+v", l)
	}
	return moveObject(ctx, client, bucket, from, to)
}

// LagOf is the Lag whose hidden file is parked at parked (an s3:// URI under
// ParkedPrefix), for CatchUp.
func LagOf(parked string) (Lag, error) {
	bucket, key, ok := splitS3(parked)
	file, under := strings.CutPrefix(key, ParkedPrefix)
	if !ok || !under || file == "" {
		return Lag{}, fmt.Errorf("%q is not a hidden state file (s3://<bucket>/%s…)", parked, ParkedPrefix)
	}
	return Lag{File: "s3://" + bucket + "/" + file, Parked: parked}, nil
}

func splitS3(uri string) (bucket, key string, ok bool) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", false
	}
	bucket, key, ok = strings.Cut(rest, "/")
	return bucket, key, ok && bucket != "" && key != ""
}

func listKeys(ctx context.Context, client *s3.Client, bucket, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing s3://%s/%s: %w", bucket, prefix, err)
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys, nil
}

// moveObject copies bucket/from to bucket/to (read and written whole: state
// files are small in the lab) and deletes from.
func moveObject(ctx context.Context, client *s3.Client, bucket, from, to string) error {
	out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(from)})
	if err != nil {
		return fmt.Errorf("reading s3://%s/%s: %w", bucket, from, err)
	}
	data, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil {
		return fmt.Errorf("reading s3://%s/%s: %w", bucket, from, err)
	}
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(to), Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data)))}); err != nil {
		return fmt.Errorf("writing s3://%s/%s: %w", bucket, to, err)
	}
	if _, err := client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(from)}); err != nil {
		return fmt.Errorf("deleting s3://%s/%s: %w", bucket, from, err)
	}
	return nil
}
