package lab

import (
	"encoding/json"
	"fmt"
	"os"
)

// CheckpointBucket is the bucket the labs create for Flink checkpoints.
const CheckpointBucket = "flink-checkpoints"

// S3Credentials are a lab's S3 store and its keys (the hermetic lab's SeaweedFS, the kind
// lab's MinIO), made once per lab and kept in its folder for the Flink jobs, the restore
// webhook and the tests. Endpoint, Region and Bucket are those seen from this host ("" when
// the store is not reachable from it).
type S3Credentials struct {
	Endpoint  string `json:"endpoint,omitempty"`
	Region    string `json:"region,omitempty"`
	Bucket    string `json:"bucket,omitempty"`
	AccessKey string `json:"accessKey"`
	SecretKey string `json:"secretKey"`
}

// ReadS3Credentials reads the credentials file at path.
func ReadS3Credentials(path string) (*S3Credentials, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &S3Credentials{}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// WriteS3Credentials writes the credentials file at path, readable by its owner only.
func WriteS3Credentials(path string, c *S3Credentials) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}
