package checkpoint

import (
	"strings"
	"testing"
)

// Inputs that broke or could break parsing and confinement; go test runs
// them as regression cases, go test -fuzz explores from them.
var fuzzSeeds = []string{
	"s3://flink-checkpoints/team-a/wordcount",
	"s3://flink-checkpoints/team-a/a?b",
	"s3://flink-checkpoints/team-a/a#b",
	"s3://flink-checkpoints/team-a/100%",
	"s3://flink-checkpoints/team-a/%2e%2e/team-b",
	"s3://flink-checkpoints/team-a/%2F..%2F",
	"s3://flink-checkpoints/team-a/ctl\x01x/y",
	"s3://flink-checkpoints/team-a/nl\n",
	"s3://flink-checkpoints/team-a/x\x7f",
	"s3://flink-checkpoints/team-a\\..\\team-b",
	"s3://flink-checkpoints/team-ab/x",
	"s3://flink-checkpoints/team-a/../team-b",
	"s3://flink-checkpoints//team-a",
	"s3a://flink-checkpoints/team-a/x",
	"S3P://flink-checkpoints/team-a/x/",
	"s3://user@flink-checkpoints/team-a",
	"s3://flink-checkpoints:9000/team-a",
	"s3://../team-a",
	"file:///data/team-a/x",
	"file://localhost/data/team-a",
	"file:/data/team-a?x",
	"file:///",
	" s3://flink-checkpoints/team-a/x \t",
	"s3://flink-checkpoints/team-a/\xff",
}

// FuzzParseLocation: every accepted URI is normalised so that it and the
// paths built below it parse back to the same location, without empty, "."
// or ".." segments.
func FuzzParseLocation(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		loc, err := ParseLocation(uri)
		if err != nil {
			return
		}
		again, err := ParseLocation(loc.String())
		if err != nil || again != loc {
			t.Fatalf("%q -> %q does not round-trip: %+v, %v", uri, loc.String(), again, err)
		}
		chk := loc.Join(jobA, "chk-7")
		if again, err := ParseLocation(chk.String()); err != nil || again != chk {
			t.Fatalf("checkpoint path %q does not round-trip: %+v, %v", chk.String(), again, err)
		}
		for _, seg := range segments(loc.Key) {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("%q: key %q has segment %q", uri, loc.Key, seg)
			}
		}
	})
}

// FuzzConfinement: a directory within a namespace's prefix names that
// namespace's area and nothing beside it, for any namespace and directory.
func FuzzConfinement(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "team-a")
	}
	f.Add("s3://flink-checkpoints/team-ab/x", "team-a")
	f.Add("s3://flink-checkpoints/team-a/x", "team-a/..")
	f.Fuzz(func(t *testing.T, uri, namespace string) {
		for _, tmpl := range []string{"s3://flink-checkpoints/{namespace}/", "s3://flink-checkpoints/{namespace}", "file:///data/{namespace}"} {
			prefix, err := ParseLocation(strings.ReplaceAll(tmpl, "{namespace}", namespace))
			if err != nil {
				continue
			}
			dir, err := ParseLocation(uri)
			if err != nil || !dir.Within(prefix) {
				continue
			}
			if dir.IsS3() != prefix.IsS3() || dir.Bucket != prefix.Bucket {
				t.Fatalf("%q within %q: other store", uri, prefix.String())
			}
			want, got := segments(prefix.Key), segments(dir.Key)
			if len(got) < len(want) {
				t.Fatalf("%q within %q: shorter key", uri, prefix.String())
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%q within %q: segment %d is %q, not %q", uri, prefix.String(), i, got[i], want[i])
				}
			}
			if !dir.Join(jobA, "chk-1").Within(prefix) {
				t.Fatalf("%q within %q, but its checkpoints are not", uri, prefix.String())
			}
		}
	})
}

// segments splits a key or path into its segments (none for a root).
func segments(key string) []string {
	if k := strings.Trim(key, "/"); k != "" {
		return strings.Split(k, "/")
	}
	return nil
}
