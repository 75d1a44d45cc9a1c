// Package checkpoint finds the latest completed Flink checkpoint of a job in
// a checkpoint store (S3-compatible object storage or a local directory).
//
// Flink lays out retained checkpoints as
//
//	<execution.checkpointing.dir>/<jobId>/chk-<N>/_metadata   (+ shared/, taskowned/)
//
// A chk-N directory without _metadata is an in-progress or failed checkpoint
// and cannot be restored. The latest completed checkpoint is therefore the
// numerically highest N whose chk-N/_metadata exists (the same rule as Flink's
// own end-to-end tests, find_latest_completed_checkpoint in common.sh).
package checkpoint

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// ErrInvalid is wrapped by every error caused by bad input (an unsupported
// URI, a malformed job id). Such errors are not retriable.
var ErrInvalid = errors.New("invalid checkpoint location")

// ErrNotFound is returned when the job has no completed checkpoint.
var ErrNotFound = errors.New("no completed checkpoint found")

// jobIDPattern matches a Flink JobID as printed by JobID.toString(): 16 bytes
// as 32 hex characters. Validating it also rules out path traversal through
// the job id.
var jobIDPattern = regexp.MustCompile(`^[0-9a-fA-F]{32}$`)

// ValidateJobID reports whether id looks like a Flink JobID.
func ValidateJobID(id string) error {
	if !jobIDPattern.MatchString(id) {
		return fmt.Errorf("%w: job id %q is not 32 hex characters", ErrInvalid, id)
	}
	return nil
}

// Location is a parsed, normalised checkpoint directory URI.
type Location struct {
	// Scheme is "s3", "s3a", "s3p" or "file" (lower case).
	Scheme string
	// Bucket is the S3 bucket (empty for file).
	Bucket string
	// Key is the S3 key prefix without leading or trailing slash (S3), or the
	// absolute filesystem path without trailing slash (file, "/" for the root).
	Key string
}

// IsS3 reports whether the location is in S3-compatible object storage.
func (l Location) IsS3() bool { return l.Scheme != "file" }

// String returns the normalised URI: s3://bucket/key or file:///path, without
// a trailing slash.
func (l Location) String() string {
	if l.IsS3() {
		if l.Key == "" {
			return l.Scheme + "://" + l.Bucket
		}
		return l.Scheme + "://" + l.Bucket + "/" + l.Key
	}
	return "file://" + l.Key
}

// Join appends path segments (which must not contain "/").
func (l Location) Join(segments ...string) Location {
	out := l
	for _, s := range segments {
		switch {
		case out.IsS3() && out.Key == "":
			out.Key = s
		case !out.IsS3() && out.Key == "/":
			out.Key = "/" + s
		default:
			out.Key = out.Key + "/" + s
		}
	}
	return out
}

// HasPrefix reports whether the normalised location lies under prefix, a URI
// that should end with "/" (e.g. "s3://flink-checkpoints/team-a/"). The
// comparison is done on the normalised form plus a trailing slash, so
// "s3://b/team-a" is under "s3://b/team-a/" but "s3://b/team-ab" is not.
func (l Location) HasPrefix(prefix string) bool {
	return strings.HasPrefix(l.String()+"/", prefix)
}

// ParseLocation parses and normalises a checkpoint directory URI. Accepted:
// s3://bucket[/prefix], s3a://…, s3p://… (the schemes of Flink's S3 file
// systems) and file:///absolute/path (also file:/absolute/path). Empty, "."
// and ".." path segments are rejected so that a prefix check on the string
// form cannot be bypassed.
func ParseLocation(uri string) (Location, error) {
	if strings.TrimSpace(uri) == "" {
		return Location{}, fmt.Errorf("%w: empty checkpoint directory", ErrInvalid)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return Location{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil || u.Opaque != "" {
		return Location{}, fmt.Errorf("%w: %q must not carry user info, query, fragment or an opaque part", ErrInvalid, uri)
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "s3", "s3a", "s3p":
		if u.Host == "" || u.Port() != "" {
			return Location{}, fmt.Errorf("%w: %q has no bucket", ErrInvalid, uri)
		}
		key := strings.Trim(u.Path, "/")
		if err := checkSegments(uri, key); err != nil {
			return Location{}, err
		}
		return Location{Scheme: scheme, Bucket: u.Host, Key: key}, nil
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return Location{}, fmt.Errorf("%w: %q names a remote host", ErrInvalid, uri)
		}
		if !strings.HasPrefix(u.Path, "/") {
			return Location{}, fmt.Errorf("%w: %q is not an absolute path", ErrInvalid, uri)
		}
		p := strings.TrimRight(u.Path, "/")
		if p == "" {
			return Location{Scheme: "file", Key: "/"}, nil
		}
		if err := checkSegments(uri, strings.TrimPrefix(p, "/")); err != nil {
			return Location{}, err
		}
		return Location{Scheme: "file", Key: p}, nil
	default:
		return Location{}, fmt.Errorf("%w: unsupported scheme in %q (want s3://, s3a://, s3p:// or file://)", ErrInvalid, uri)
	}
}

func checkSegments(uri, p string) error {
	if p == "" {
		return nil
	}
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." || s == ".." {
			return fmt.Errorf("%w: %q contains an empty, \".\" or \"..\" path segment", ErrInvalid, uri)
		}
	}
	return nil
}
