package checkpoint

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3Config configures the S3 client used to list checkpoints.
type S3Config struct {
	// Endpoint is the base URL of the S3-compatible store, e.g.
	// http://127.0.0.1:8333 (SeaweedFS) or http://minio:9000. Empty means AWS.
	Endpoint string
	// Region; S3-compatible stores usually accept any ("us-east-1").
	Region string
	// AccessKeyID / SecretAccessKey / SessionToken; all empty means anonymous.
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	// VirtualHostStyle switches from path-style (http://host/bucket/key, the
	// default, which S3-compatible stores need) to bucket.host addressing.
	VirtualHostStyle bool
	// MaxAttempts overrides the SDK's retry attempts when > 0.
	MaxAttempts int
	// HTTPClient overrides the HTTP client (tests, custom TLS).
	HTTPClient *http.Client
}

// NewS3Client builds an S3 client for listing checkpoints. Request checksums
// are only calculated/validated when an operation requires them, because
// S3-compatible stores (SeaweedFS, older MinIO) may reject or not return the
// newer flexible checksums.
func NewS3Client(cfg S3Config) *s3.Client {
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	opts := s3.Options{
		Region:                     region,
		UsePathStyle:               !cfg.VirtualHostStyle,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		RetryMaxAttempts:           cfg.MaxAttempts,
	}
	if cfg.Endpoint != "" {
		opts.BaseEndpoint = aws.String(cfg.Endpoint)
	}
	if cfg.AccessKeyID != "" || cfg.SecretAccessKey != "" {
		opts.Credentials = credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)
	} else {
		opts.Credentials = aws.AnonymousCredentials{}
	}
	if cfg.HTTPClient != nil {
		opts.HTTPClient = cfg.HTTPClient
	}
	return s3.New(opts)
}

// ReadCredentialsFile reads aws_access_key_id, aws_secret_access_key and
// aws_session_token of profile (default "default") from an AWS shared
// credentials file (INI: "[profile]" sections, "key = value" lines).
func ReadCredentialsFile(path, profile string) (accessKey, secretKey, sessionToken string, err error) {
	if profile == "" {
		profile = "default"
	}
	f, err := os.Open(path)
	if err != nil {
		return "", "", "", err
	}
	defer f.Close()
	section, found := "", false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.TrimSpace(strings.TrimPrefix(strings.Trim(line, "[]"), "profile "))
			continue
		}
		if section != profile {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "aws_access_key_id":
			accessKey, found = strings.TrimSpace(v), true
		case "aws_secret_access_key":
			secretKey, found = strings.TrimSpace(v), true
		case "aws_session_token":
			sessionToken = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return "", "", "", err
	}
	if !found {
		return "", "", "", fmt.Errorf("%s: no credentials for profile %q", path, profile)
	}
	return accessKey, secretKey, sessionToken, nil
}
