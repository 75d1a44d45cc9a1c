package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/karmada-failover/lab/lab"
	"github.com/karmada-failover/lab/lab/config"
)

// The lab's S3 store: SeaweedFS (Apache-2.0) in `weed mini` mode, one process
// serving S3 on 127.0.0.1. Checkpoints live here, outside every member
// cluster, as they would in replicated object storage.

// S3CredentialsFile is where the lab writes its S3 credentials.
func (l *Lab) S3CredentialsFile() string { return filepath.Join(l.Cfg.S3Dir(), "credentials.json") }

// S3Credentials returns the running lab's S3 credentials (lab.CheckpointStore).
func (l *Lab) S3Credentials() (*lab.S3Credentials, error) {
	return lab.ReadS3Credentials(l.S3CredentialsFile())
}

// setUpAndStartS3 is Up's step: the lab's S3 credentials and SeaweedFS's identities made
// once (setupS3), then SeaweedFS started.
func (l *Lab) setUpAndStartS3(ctx context.Context) error {
	if err := l.setUpComponent("seaweedfs"); err != nil {
		return fmt.Errorf("SeaweedFS S3: %w", err)
	}
	return l.startS3(ctx)
}

// startS3 starts SeaweedFS on the lab's credentials and data (see prepareS3), the bucket
// created at start-up when it is not there.
func (l *Lab) startS3(ctx context.Context) error {
	if err := l.startComponent(ctx, "seaweedfs", nil); err != nil {
		return fmt.Errorf("SeaweedFS S3: %w", err)
	}
	return nil
}

// s3Endpoint and s3Region are where the lab's S3 store answers, as every client is told.
func (l *Lab) s3Endpoint() string { return "http://" + hostPort(l.Cfg.Ports.S3()) }

const s3Region = "us-east-1"

// s3Data is SeaweedFS's data folder; s3Identities its S3 identities file.
func (l *Lab) s3Data() string       { return filepath.Join(l.Cfg.DataDir(), "seaweedfs") }
func (l *Lab) s3Identities() string { return filepath.Join(l.Cfg.S3Dir(), "s3-identities.json") }

// s3Args are SeaweedFS's flags: `weed mini` with every port the lab's and the bucket made at start.
func (l *Lab) s3Args() []string {
	base := l.Cfg.Ports.S3Base
	port := func(offset int) string { return strconv.Itoa(base + offset) }
	data := l.s3Data()
	return []string{"mini", "-dir=" + data, "-ip=" + config.Host, "-ip.bind=" + config.Host,
		"-master.port=" + port(3), "-master.port.grpc=" + port(13),
		"-volume.port=" + port(4), "-volume.port.grpc=" + port(14),
		"-filer.port=" + port(5), "-filer.port.grpc=" + port(15),
		"-s3.port=" + port(6), "-s3.port.grpc=" + port(16),
		"-admin.port=" + port(7), "-admin.port.grpc=" + port(17), "-admin.port.legacy=0", "-admin.ui=false",
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-webdav=false",
		"-master.telemetry=false", "-master.volumeSizeLimitMB=64", "-volume.max=8",
		"-filer.localSocket=" + filepath.Join(data, "filer.sock"), "-s3.localSocket=" + filepath.Join(data, "s3.sock"),
		"-s3.config=" + l.s3Identities(), "-bucket=" + lab.CheckpointBucket,
	}
}

// setupS3 writes the lab's S3 credentials (a new secret per lab) and SeaweedFS's identities
// for them. It runs once per lab (Up; the data folder is fresh there too): every Flink
// runner, Flink job, restore webhook and test signs its requests with this secret for the
// lab's whole life, so a restart of the store must not change it.
func (l *Lab) setupS3() error {
	if err := os.MkdirAll(l.Cfg.S3Dir(), 0o700); err != nil {
		return err
	}
	secret := make([]byte, 20)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	creds := lab.S3Credentials{
		Endpoint: l.s3Endpoint(), Region: s3Region, Bucket: lab.CheckpointBucket,
		AccessKey: "lab", SecretKey: hex.EncodeToString(secret),
	}
	if err := lab.WriteS3Credentials(l.S3CredentialsFile(), &creds); err != nil {
		return err
	}
	identities := map[string]interface{}{"identities": []interface{}{map[string]interface{}{
		"name":        "lab",
		"credentials": []interface{}{map[string]string{"accessKey": creds.AccessKey, "secretKey": creds.SecretKey}},
		"actions":     []string{"Admin", "Read", "Write", "List", "Tagging"},
	}}}
	b, _ := json.MarshalIndent(identities, "", "  ")
	return os.WriteFile(l.s3Identities(), b, 0o600)
}

// prepareS3 runs before every start of SeaweedFS: its data folder (kept across restarts: the
// checkpoints are there) and the identities setupS3 wrote, which it needs and does not write.
func (l *Lab) prepareS3() error {
	if err := os.MkdirAll(l.s3Data(), 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(l.s3Identities()); err != nil {
		return fmt.Errorf("SeaweedFS's identities (written once per lab by `lab up`): %w", err)
	}
	if _, err := l.S3Credentials(); err != nil {
		return fmt.Errorf("the lab's S3 credentials (written once per lab by `lab up`): %w", err)
	}
	return nil
}
