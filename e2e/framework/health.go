package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flinkapi "github.com/karmada-failover/lab/apis/flink"
	"github.com/karmada-failover/lab/lab"
)

// What the next spec needs of the lab, checked after every spec: a spec that leaves a fault
// behind (a member down or cut off, the checkpoint store down or refusing its clients, a Flink
// job restarting for good) fails itself instead of the specs after it.

// HealthProblem is one thing of the lab that is not as the next spec needs it.
type HealthProblem struct {
	// What: a component, a member, the checkpoint store, a FlinkDeployment.
	What   string
	Detail string
}

func (p HealthProblem) String() string { return p.What + ": " + p.Detail }

// HealthProblems lists what is wrong with the lab: every component of the provider healthy
// (lab status), every member a Ready Karmada Cluster without NoExecute taints, the checkpoint
// store taking a write with the credentials its clients were given when the lab came up
// (CheckpointStore.Probe), and no FlinkDeployment in a member whose job is RESTARTING. An
// empty list is a healthy lab.
func (l *Lab) HealthProblems(ctx context.Context) []HealthProblem {
	var out []HealthProblem
	rows, err := l.Provider.Status(ctx)
	if err != nil {
		out = append(out, HealthProblem{"lab status", err.Error()})
	}
	for _, r := range rows {
		if !r.Healthy {
			out = append(out, HealthProblem{r.Component, r.Detail})
		}
	}
	for _, m := range l.MemberNames() {
		if ready, err := l.ClusterReady(ctx, m); err != nil || !ready {
			out = append(out, HealthProblem{"Cluster " + m, fmt.Sprintf("not Ready (%v)", err)})
		}
		if taints, err := l.ClusterNoExecuteTaints(ctx, m); err != nil || len(taints) > 0 {
			out = append(out, HealthProblem{"Cluster " + m, fmt.Sprintf("NoExecute taints %v (%v)", taints, err)})
		}
	}
	if l.Checkpoints != nil {
		if err := l.Checkpoints.Probe(ctx, lab.CheckpointBucket, "e2e-health"); err != nil {
			out = append(out, HealthProblem{"checkpoint store", err.Error()})
		}
	}
	for _, m := range l.MemberNames() {
		list, err := l.Member(m).Dynamic().Resource(flinkapi.GVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			if !apierrors.IsNotFound(err) { // no FlinkDeployment CRD in this member: nothing to check
				out = append(out, HealthProblem{"FlinkDeployments in " + m, err.Error()})
			}
			continue
		}
		for _, fd := range list.Items {
			if fd.GetDeletionTimestamp() != nil {
				continue
			}
			if state, _, _ := unstructured.NestedString(fd.Object, flinkapi.JobStatePath...); state == "RESTARTING" {
				out = append(out, HealthProblem{fmt.Sprintf("FlinkDeployment %s/%s in %s", fd.GetNamespace(), fd.GetName(), m),
					"job RESTARTING"})
			}
		}
	}
	return out
}

// Probe is one round of what a Flink job and the restore path do with the store, with the
// credentials s holds: PUT an object under prefix, HEAD a key that is not there (NotFound,
// not Forbidden: a store that refuses the credentials answers 403 to both), GET the object
// back, LIST the prefix, DELETE the object. It returns what failed, naming the request.
func (s *CheckpointStore) Probe(ctx context.Context, bucket, prefix string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	key := fmt.Sprintf("%s/probe-%d", prefix, time.Now().UnixNano())
	body := []byte("probe " + key)
	if err := s.Put(ctx, bucket, key, body); err != nil {
		return err
	}
	defer func() { _ = s.Delete(context.WithoutCancel(ctx), bucket, key) }()
	_, err := s.client().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key + "-missing")})
	var notFound *s3types.NotFound
	if !errors.As(err, &notFound) {
		return fmt.Errorf("HEAD of a missing key s3://%s/%s-missing: want NotFound, got %v", bucket, key, err)
	}
	if got, err := s.Get(ctx, bucket, key); err != nil || !bytes.Equal(got, body) {
		return fmt.Errorf("GET s3://%s/%s: read %q (%v), wrote %q", bucket, key, got, err, body)
	}
	list, err := s.client().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix + "/")})
	if err != nil {
		return fmt.Errorf("LIST s3://%s/%s/: %w", bucket, prefix, err)
	}
	for _, o := range list.Contents {
		if aws.ToString(o.Key) == key {
			return s.Delete(ctx, bucket, key)
		}
	}
	return fmt.Errorf("LIST s3://%s/%s/: %s is not listed", bucket, prefix, key)
}

// Get reads object key of bucket (a test reads back what it wrote before a fault).
func (s *CheckpointStore) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	got, err := s.client().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, fmt.Errorf("GET s3://%s/%s: %w", bucket, key, err)
	}
	defer got.Body.Close()
	return io.ReadAll(got.Body)
}

// Put writes object key of bucket.
func (s *CheckpointStore) Put(ctx context.Context, bucket, key string, body []byte) error {
	if _, err := s.client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
		return fmt.Errorf("PUT s3://%s/%s: %w", bucket, key, err)
	}
	return nil
}

// Delete removes object key of bucket.
func (s *CheckpointStore) Delete(ctx context.Context, bucket, key string) error {
	if _, err := s.client().DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		return fmt.Errorf("DELETE s3://%s/%s: %w", bucket, key, err)
	}
	return nil
}
