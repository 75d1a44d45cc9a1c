package checkpoint

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const (
	jobA = "44cc5573945d1d4925732d915c70b9ac"
	jobB = "0123456789abcdef0123456789abcdef"
)

func TestParseLocation(t *testing.T) {
	ok := map[string]string{
		"s3://flink-checkpoints/team-a/job1":  "s3://flink-checkpoints/team-a/job1",
		"s3://flink-checkpoints/team-a/job1/": "s3://flink-checkpoints/team-a/job1",
		"S3://bucket":                         "s3://bucket",
		"s3a://bucket/x":                      "s3a://bucket/x",
		"s3p://bucket/x/":                     "s3p://bucket/x",
		"file:///tmp/ckpt/":                   "file:///tmp/ckpt",
		"file:/tmp/ckpt":                      "file:///tmp/ckpt",
		"file://localhost/tmp/ckpt":           "file:///tmp/ckpt",
		"file:///":                            "file:///",
		" s3://bucket/x\n":                    "s3://bucket/x",
		// Literal, as Flink's Path reads them: no percent-decoding, and "?"
		// and "#" are part of the key.
		"s3://bucket/with%20space/and-dash_ok": "s3://bucket/with%20space/and-dash_ok",
		"s3://bucket/with space":               "s3://bucket/with space",
		"s3://b/a/%2E%2E/other":                "s3://b/a/%2E%2E/other",
		"s3://b/a?x=1":                         "s3://b/a?x=1",
		"s3://b/a#frag/b":                      "s3://b/a#frag/b",
		"s3://b/100%/x":                        "s3://b/100%/x",
		"s3://b/tab\there/x":                   "s3://b/tab\there/x",
		"file:///tmp/a?b#c%d":                  "file:///tmp/a?b#c%d",
	}
	for in, want := range ok {
		loc, err := ParseLocation(in)
		if err != nil {
			t.Errorf("ParseLocation(%q): %v", in, err)
			continue
		}
		if got := loc.String(); got != want {
			t.Errorf("ParseLocation(%q) = %q, want %q", in, got, want)
		}
		if again, err := ParseLocation(loc.String()); err != nil || again != loc {
			t.Errorf("ParseLocation(%q) does not round-trip: %+v, %v", loc.String(), again, err)
		}
	}
	bad := []string{
		"", " ", "hdfs://nn/ckpt", "/tmp/ckpt", "tmp/ckpt", "s3://", "s3:///nobucket", "s3:bucket/x",
		"s3://b/a/../other", "s3://b/a//b", "s3://b/./a", "s3://b/a/..",
		"s3://user@b/a", "s3://b:9000/a", "s3://../a", "s3://b?x/a", "file://otherhost/tmp", "file:///tmp/../etc",
		"file:tmp", "file://", "gs://b/a", "s3://b/a\\..\\c", "s3://b/a\x01/", "s3://b/\xff",
	}
	for _, in := range bad {
		if _, err := ParseLocation(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseLocation(%q) error = %v, want ErrInvalid", in, err)
		}
	}
}

func TestWithin(t *testing.T) {
	cases := []struct {
		dir, prefix string
		want        bool
	}{
		{"s3://flink-checkpoints/team-a/job1", "s3://flink-checkpoints/team-a/", true},
		{"s3://flink-checkpoints/team-a", "s3://flink-checkpoints/team-a/", true},
		{"s3://flink-checkpoints/team-a/job1", "s3://flink-checkpoints/team-a", true},
		{"s3://flink-checkpoints/team-ab/job1", "s3://flink-checkpoints/team-a/", false},
		// a prefix template without a trailing slash still compares segments
		{"s3://flink-checkpoints/team-ab/job1", "s3://flink-checkpoints/team-a", false},
		{"s3://flink-checkpoints/team-a-old/job1", "s3://flink-checkpoints/team-a", false},
		{"s3://flink-checkpoints-evil/team-a/job1", "s3://flink-checkpoints/team-a/", false},
		{"s3://flink-checkpoints/x/team-a/job1", "s3://flink-checkpoints/team-a/", false},
		// s3, s3a and s3p name the same objects
		{"s3a://flink-checkpoints/team-a/job1", "s3://flink-checkpoints/team-a/", true},
		{"s3p://flink-checkpoints/team-a/job1", "s3a://flink-checkpoints/team-a/", true},
		{"s3://flink-checkpoints/team-a/job1", "s3p://flink-checkpoints/team-a/", true},
		{"s3://flink-checkpoints/team-a/job1", "file:///flink-checkpoints/team-a/", false},
		{"file:///flink-checkpoints/team-a/job1", "s3://flink-checkpoints/team-a/", false},
		{"s3://ckpt-team-a/job1", "s3://ckpt-team-a", true},
		{"s3://ckpt-team-ab/job1", "s3://ckpt-team-a", false},
		{"file:///data/team-a/x", "file:///data/team-a/", true},
		{"file:///data/team-ab/x", "file:///data/team-a", false},
		{"file:///anything", "file:///", true},
	}
	for _, c := range cases {
		loc, err := ParseLocation(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		prefix, err := ParseLocation(c.prefix)
		if err != nil {
			t.Fatal(err)
		}
		if got := loc.Within(prefix); got != c.want {
			t.Errorf("%q Within %q = %v, want %v", c.dir, c.prefix, got, c.want)
		}
	}
}

func TestValidateJobID(t *testing.T) {
	for _, id := range []string{jobA, strings.ToUpper(jobA)} {
		if err := ValidateJobID(id); err != nil {
			t.Errorf("ValidateJobID(%q): %v", id, err)
		}
	}
	for _, id := range []string{"", "abc", jobA + "0", "../" + jobA[3:], "44cc5573945d1d4925732d915c70b9az"} {
		if err := ValidateJobID(id); !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidateJobID(%q) = %v, want ErrInvalid", id, err)
		}
	}
}

// touch creates a file (and its parents) under root.
func touch(t *testing.T, root, rel string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, root, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(rel)), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestFileLatestCompleted(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "ckpt")
	// Completed: 2, 9, 10. chk-11 is in progress (no _metadata, only state),
	// chk-12 has a directory named _metadata (not a file), chk-13 is empty.
	// Another job has a higher completed checkpoint.
	touch(t, base, jobA+"/chk-2/_metadata")
	touch(t, base, jobA+"/chk-9/_metadata")
	touch(t, base, jobA+"/chk-10/_metadata")
	touch(t, base, jobA+"/chk-10/0b3c-state")
	touch(t, base, jobA+"/chk-11/0b3c-state")
	mkdir(t, base, jobA+"/chk-12/_metadata")
	mkdir(t, base, jobA+"/chk-13")
	touch(t, base, jobA+"/chk-x/_metadata")
	touch(t, base, jobA+"/shared/abc")
	touch(t, base, jobA+"/taskowned/def")
	touch(t, base, jobB+"/chk-99/_metadata")

	s := &Store{AllowFile: true}
	got, err := s.LatestCompleted(context.Background(), "file://"+base+"/", jobA)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != 10 || got.SavepointPath != "file://"+base+"/"+jobA+"/chk-10" || got.Completed.IsZero() {
		t.Fatalf("got %+v, want chk-10 with its completion time", got)
	}

	// A job whose directory has only incomplete checkpoints, and a job that
	// never wrote anything.
	touch(t, base, "ffffffffffffffffffffffffffffffff/chk-1/state")
	for _, id := range []string{"ffffffffffffffffffffffffffffffff", "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"} {
		if _, err := s.LatestCompleted(context.Background(), "file://"+base, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("job %s: err = %v, want ErrNotFound", id, err)
		}
	}

	if _, err := (&Store{}).LatestCompleted(context.Background(), "file://"+base, jobA); !errors.Is(err, ErrInvalid) {
		t.Errorf("file disabled: err = %v, want ErrInvalid", err)
	}
	if _, err := s.LatestCompleted(context.Background(), "file://"+base, "../"+jobA[3:]); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad job id: err = %v, want ErrInvalid", err)
	}
}

func TestS3LatestCompleted(t *testing.T) {
	f := &fakeS3{objects: map[string][]string{
		"flink-checkpoints": {
			"team-a/job1/" + jobA + "/chk-2/_metadata",
			"team-a/job1/" + jobA + "/chk-9/_metadata",
			"team-a/job1/" + jobA + "/chk-9/7f1e-state",
			"team-a/job1/" + jobA + "/chk-10/_metadata",
			"team-a/job1/" + jobA + "/chk-10/7f1e-state",
			"team-a/job1/" + jobA + "/chk-11/7f1e-state", // in progress
			"team-a/job1/" + jobA + "/chk-12/_metadata.inprogress",
			"team-a/job1/" + jobA + "/chk-13/sub/_metadata",
			"team-a/job1/" + jobA + "/chk-1x/_metadata",
			"team-a/job1/" + jobA + "/shared/abc",
			"team-a/job1/" + jobA + "/taskowned/def",
			"team-a/job1/" + jobB + "/chk-99/_metadata",
			"team-a/job1-old/" + jobA + "/chk-50/_metadata",
		},
		"root-bucket": {
			jobA + "/chk-7/_metadata",
			jobA + "/chk-31/_metadata",
			jobA + "/chk-300/state",
		},
	}}
	s := newFakeS3Store(t, f)
	ctx := context.Background()

	got, err := s.LatestCompleted(ctx, "s3://flink-checkpoints/team-a/job1/", jobA)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Checkpoint{ID: 10, SavepointPath: "s3://flink-checkpoints/team-a/job1/" + jobA + "/chk-10", Completed: baseTime, JobID: jobA}); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	reqs := f.seen()
	if lists, _ := f.counts(); lists < 2 {
		t.Fatalf("expected paging (page size 2), saw %d list request(s)", lists)
	}
	for _, r := range reqs {
		if r.Method == http.MethodHead {
			if !strings.HasPrefix(r.URL.Path, "/flink-checkpoints/team-a/job1/"+jobA+"/chk-") || !strings.HasSuffix(r.URL.Path, "/_metadata") {
				t.Errorf("HEAD %q is not a path-style chk-N/_metadata of the job", r.URL.Path)
			}
		} else {
			if r.URL.Path != "/flink-checkpoints" && r.URL.Path != "/flink-checkpoints/" {
				t.Errorf("request path %q is not path-style /flink-checkpoints", r.URL.Path)
			}
			if p, d := r.URL.Query().Get("prefix"), r.URL.Query().Get("delimiter"); p != "team-a/job1/"+jobA+"/chk-" || d != "/" {
				t.Errorf("prefix = %q, delimiter = %q", p, d)
			}
		}
		if a := r.Header.Get("Authorization"); !strings.Contains(a, "Credential=AKIDLAB/") {
			t.Errorf("request not signed with the configured key: %q", a)
		}
	}

	got, err = s.LatestCompleted(ctx, "s3a://root-bucket", jobA)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Checkpoint{ID: 31, SavepointPath: "s3a://root-bucket/" + jobA + "/chk-31", Completed: baseTime, JobID: jobA}); !reflect.DeepEqual(got, want) {
		t.Fatalf("bucket root: got %+v, want %+v", got, want)
	}

	if _, err := s.LatestCompleted(ctx, "s3://flink-checkpoints/team-a/job1", "ffffffffffffffffffffffffffffffff"); !errors.Is(err, ErrNotFound) {
		t.Errorf("no checkpoints: err = %v, want ErrNotFound", err)
	}
	if _, err := s.LatestCompleted(ctx, "s3://flink-checkpoints/team-a/job1/../x", jobA); !errors.Is(err, ErrInvalid) {
		t.Errorf("traversal: err = %v, want ErrInvalid", err)
	}
	_, err = s.LatestCompleted(ctx, "s3://missing-bucket/x", jobA)
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalid) {
		t.Errorf("missing bucket: err = %v, want a store error", err)
	}
}

func TestS3StoreError(t *testing.T) {
	s := newFakeS3Store(t, &fakeS3{failStatus: 403, failCode: "AccessDenied", objects: map[string][]string{}})
	_, err := s.LatestCompleted(context.Background(), "s3://flink-checkpoints/team-a", jobA)
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want a store error", err)
	}
	if !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("error does not carry the S3 code: %v", err)
	}
	if _, err := (&Store{}).LatestCompleted(context.Background(), "s3://b/x", jobA); !errors.Is(err, ErrInvalid) {
		t.Errorf("no S3 client: err = %v, want ErrInvalid", err)
	}
}

func TestReadCredentialsFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "credentials")
	content := `# lab
[default]
aws_access_key_id = AK1
aws_secret_access_key = SK1

[profile seaweed]
aws_access_key_id=AK2
aws_secret_access_key=SK2
aws_session_token = TOK
`
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	ak, sk, tok, err := ReadCredentialsFile(p, "")
	if err != nil || ak != "AK1" || sk != "SK1" || tok != "" {
		t.Errorf("default = %q %q %q %v", ak, sk, tok, err)
	}
	ak, sk, tok, err = ReadCredentialsFile(p, "seaweed")
	if err != nil || ak != "AK2" || sk != "SK2" || tok != "TOK" {
		t.Errorf("seaweed = %q %q %q %v", ak, sk, tok, err)
	}
	if _, _, _, err := ReadCredentialsFile(p, "nope"); err == nil {
		t.Error("missing profile: want error")
	}
}
