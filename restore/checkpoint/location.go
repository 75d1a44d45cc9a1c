// Package checkpoint finds the latest completed Flink checkpoint of a job in
// a checkpoint store (S3-compatible object storage or a local directory).
//
// Flink lays out retained checkpoints as
//
//	<execution.checkpointing.dir>/<jobId>/chk-<N>/_metadata   (+ shared/, taskowned/)
//
// A chk-N directory without _metadata is an in-progress or failed checkpoint
// and cannot be restored. The latest completed checkpoint is the one whose
// _metadata was written last; within one run of a job that is the highest N,
// but a job id reused by a restart with a reset counter leaves two runs in
// one directory, so the locator compares completion times and uses N only to
// break ties.
package checkpoint

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"
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

// bucketPattern accepts S3 bucket names (including legacy ones with upper
// case and underscores). It rules out user info ("@"), ports (":") and names
// that HTTP path-style addressing would treat as "." or "..".
var bucketPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$`)

// ValidateJobID reports whether id looks like a Flink JobID.
func ValidateJobID(id string) error {
	if !jobIDPattern.MatchString(id) {
		return fmt.Errorf("%w: job id %q is not 32 hex characters", ErrInvalid, id)
	}
	return nil
}

// Location is a parsed, normalised checkpoint directory URI.
//
// It is read the way Flink reads a path (org.apache.flink.core.fs.Path): a
// scheme, an authority up to the next "/", and the rest taken literally. There
// is no percent-decoding and no query or fragment: "%", "?" and "#" are part
// of the key, as they are in the S3 object names Flink writes.
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
// a trailing slash. ParseLocation(l.String()) returns l.
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

// Base returns the last path segment ("" for an S3 bucket root, "/" for the
// file system root).
func (l Location) Base() string {
	if l.IsS3() && l.Key == "" {
		return ""
	}
	return path.Base(l.Key)
}

// Within reports whether l is prefix or lies below it, comparing whole path
// segments: s3://b/team-a/x is within s3://b/team-a, s3://b/team-ab is not.
// The S3 schemes s3, s3a and s3p name the same objects and are equivalent.
func (l Location) Within(prefix Location) bool {
	if l.IsS3() != prefix.IsS3() || l.Bucket != prefix.Bucket {
		return false
	}
	if prefix.Key == "" || prefix.Key == "/" || l.Key == prefix.Key {
		return true
	}
	return strings.HasPrefix(l.Key, prefix.Key+"/")
}

// ParseLocation parses and normalises a checkpoint directory URI. Accepted:
// s3://bucket[/prefix], s3a://…, s3p://… (the schemes of Flink's S3 file
// systems) and file:///absolute/path (also file:/absolute/path and
// file://localhost/…). Like Flink, surrounding white space and control
// characters are trimmed and the path is taken literally. Rejected so that a
// prefix check on the result cannot be bypassed: empty, "." and ".." path
// segments, backslashes (Flink reads them as "/"), invalid UTF-8, and a path
// ending in white space or a control character (Flink would trim it from the
// checkpoint directory but not from the paths below it).
func ParseLocation(uri string) (Location, error) {
	s := strings.TrimFunc(uri, isJavaTrimmed)
	if s == "" {
		return Location{}, fmt.Errorf("%w: empty checkpoint directory", ErrInvalid)
	}
	if !utf8.ValidString(s) {
		return Location{}, fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalid, uri)
	}
	if strings.ContainsRune(s, '\\') {
		return Location{}, fmt.Errorf("%w: %q contains a backslash, which Flink reads as a path separator", ErrInvalid, uri)
	}
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || strings.Contains(scheme, "/") {
		return Location{}, fmt.Errorf("%w: %q has no scheme (want s3://, s3a://, s3p:// or file://)", ErrInvalid, uri)
	}
	var loc Location
	var err error
	switch scheme = strings.ToLower(scheme); scheme {
	case "s3", "s3a", "s3p":
		loc, err = parseS3(uri, scheme, rest)
	case "file":
		loc, err = parseFile(uri, rest)
	default:
		return Location{}, fmt.Errorf("%w: unsupported scheme in %q (want s3://, s3a://, s3p:// or file://)", ErrInvalid, uri)
	}
	if err != nil {
		return Location{}, err
	}
	if k := loc.Key; k != "" && isJavaTrimmed(rune(k[len(k)-1])) {
		return Location{}, fmt.Errorf("%w: %q ends in white space or a control character", ErrInvalid, uri)
	}
	return loc, nil
}

func parseS3(uri, scheme, rest string) (Location, error) {
	rest, ok := strings.CutPrefix(rest, "//")
	bucket, key, _ := strings.Cut(rest, "/")
	if !ok || !bucketPattern.MatchString(bucket) {
		return Location{}, fmt.Errorf("%w: %q has no valid bucket (want %s://bucket/prefix, without user info or port)", ErrInvalid, uri, scheme)
	}
	key = strings.Trim(key, "/")
	if err := checkSegments(uri, key); err != nil {
		return Location{}, err
	}
	return Location{Scheme: scheme, Bucket: bucket, Key: key}, nil
}

func parseFile(uri, rest string) (Location, error) {
	p := rest
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		host := after
		p = ""
		if i := strings.IndexByte(after, '/'); i >= 0 {
			host, p = after[:i], after[i:]
		}
		if host != "" && !strings.EqualFold(host, "localhost") {
			return Location{}, fmt.Errorf("%w: %q names a remote host", ErrInvalid, uri)
		}
	}
	if !strings.HasPrefix(p, "/") {
		return Location{}, fmt.Errorf("%w: %q is not an absolute path", ErrInvalid, uri)
	}
	p = strings.TrimRight(p, "/")
	if p == "" {
		return Location{Scheme: "file", Key: "/"}, nil
	}
	if err := checkSegments(uri, p[1:]); err != nil {
		return Location{}, err
	}
	return Location{Scheme: "file", Key: p}, nil
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

// isJavaTrimmed matches what Java's String.trim() removes (Flink trims paths
// with it): every character up to and including the space.
func isJavaTrimmed(r rune) bool { return r <= ' ' }
