package checkpoint

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeS3 is a minimal in-process S3 endpoint, path-style: ListObjectsV2
// (GET /<bucket>?list-type=2&prefix=…&delimiter=…&continuation-token=…) with
// paging in S3's lexicographic order and common prefixes, and HeadObject
// (HEAD /<bucket>/<key>) with Last-Modified.
type fakeS3 struct {
	t        testing.TB
	pageSize int
	// objects: bucket -> keys
	objects map[string][]string
	// modified: "bucket/key" -> Last-Modified; default baseTime.
	modified map[string]time.Time
	// content: "bucket/key" -> the object's bytes (GetObject, and its size in
	// HeadObject and listings); objects without an entry hold 1 byte.
	content map[string][]byte
	// rawNames ignores encoding-type=url, noDelimiter the delimiter, as some
	// S3-compatible stores do.
	rawNames, noDelimiter bool
	// latency delays every request.
	latency time.Duration
	// failWith makes every request fail with this HTTP status and S3 code.
	failStatus int
	failCode   string

	once   sync.Once
	sorted map[string][]string
	exists map[string]bool

	mu       sync.Mutex
	requests []*http.Request
}

// baseTime is the Last-Modified of objects without an entry in modified.
var baseTime = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

type listResult struct {
	XMLName               xml.Name       `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListBucketResult"`
	Name                  string         `xml:"Name"`
	Prefix                string         `xml:"Prefix"`
	Delimiter             string         `xml:"Delimiter,omitempty"`
	EncodingType          string         `xml:"EncodingType,omitempty"`
	KeyCount              int            `xml:"KeyCount"`
	MaxKeys               int            `xml:"MaxKeys"`
	IsTruncated           bool           `xml:"IsTruncated"`
	Contents              []listEntry    `xml:"Contents"`
	CommonPrefixes        []commonPrefix `xml:"CommonPrefixes"`
	ContinuationToken     string         `xml:"ContinuationToken,omitempty"`
	NextContinuationToken string         `xml:"NextContinuationToken,omitempty"`
}

type listEntry struct {
	Key          string `xml:"Key"`
	Size         int    `xml:"Size"`
	StorageClass string `xml:"StorageClass"`
}

type commonPrefix struct {
	Prefix string `xml:"Prefix"`
}

func (f *fakeS3) index() {
	f.once.Do(func() {
		f.sorted, f.exists = map[string][]string{}, map[string]bool{}
		for b, keys := range f.objects {
			s := append([]string(nil), keys...)
			sort.Strings(s)
			f.sorted[b] = s
			for _, k := range keys {
				f.exists[b+"/"+k] = true
			}
		}
	})
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.Clone(r.Context()))
	f.mu.Unlock()
	time.Sleep(f.latency)
	f.index()
	if f.failStatus != 0 {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(f.failStatus)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected</Message><RequestId>1</RequestId></Error>`, f.failCode)
		return
	}
	switch {
	case r.Method == http.MethodHead:
		f.head(w, r)
	case r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2":
		f.list(w, r)
	case r.Method == http.MethodGet && strings.Count(strings.TrimPrefix(r.URL.Path, "/"), "/") >= 1:
		f.get(w, r)
	default:
		http.Error(w, "only ListObjectsV2, HeadObject and GetObject are implemented", http.StatusNotImplemented)
	}
}

func (f *fakeS3) head(w http.ResponseWriter, r *http.Request) {
	obj := strings.TrimPrefix(r.URL.Path, "/") // bucket/key, decoded
	if !f.exists[obj] {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	t, ok := f.modified[obj]
	if !ok {
		t = baseTime
	}
	w.Header().Set("Last-Modified", t.UTC().Format(http.TimeFormat))
	w.Header().Set("Content-Length", strconv.Itoa(f.size(obj)))
	w.WriteHeader(http.StatusOK)
}

func (f *fakeS3) size(obj string) int {
	if c, ok := f.content[obj]; ok {
		return len(c)
	}
	return 1
}

func (f *fakeS3) get(w http.ResponseWriter, r *http.Request) {
	obj := strings.TrimPrefix(r.URL.Path, "/")
	if !f.exists[obj] {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>no key</Message></Error>`)
		return
	}
	c, ok := f.content[obj]
	if !ok {
		c = []byte{0}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(c)))
	_, _ = w.Write(c)
}

func (f *fakeS3) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	bucket := strings.Trim(r.URL.Path, "/")
	keys, ok := f.sorted[bucket]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><Message>no bucket</Message></Error>`)
		return
	}
	prefix, delim := q.Get("prefix"), q.Get("delimiter")
	if f.noDelimiter {
		delim = ""
	}
	// entries: keys, or common prefixes (marked with a trailing delimiter
	// and a flag), in lexicographic order.
	type entry struct {
		name   string
		prefix bool
	}
	var matching []entry
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if i := strings.Index(k[len(prefix):], delim); delim != "" && i >= 0 {
			cp := k[:len(prefix)+i+len(delim)]
			if n := len(matching); n > 0 && matching[n-1].prefix && matching[n-1].name == cp {
				continue
			}
			matching = append(matching, entry{cp, true})
			continue
		}
		matching = append(matching, entry{k, false})
	}
	start := 0
	if tok := q.Get("continuation-token"); tok != "" {
		n, err := strconv.Atoi(tok)
		if err != nil {
			http.Error(w, "bad token", http.StatusBadRequest)
			return
		}
		start = n
	}
	end := min(start+f.pageSize, len(matching))
	// encoding-type=url: names are URL-encoded as AWS does (XML cannot carry
	// control characters); otherwise raw.
	enc := func(s string) string { return s }
	encoding := q.Get("encoding-type")
	if f.rawNames {
		encoding = ""
	}
	if encoding == "url" {
		enc = url.QueryEscape
	}
	res := listResult{Name: bucket, Prefix: enc(prefix), Delimiter: enc(delim), EncodingType: encoding,
		MaxKeys: f.pageSize, ContinuationToken: q.Get("continuation-token")}
	for _, e := range matching[start:end] {
		if e.prefix {
			res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{enc(e.name)})
		} else {
			res.Contents = append(res.Contents, listEntry{Key: enc(e.name), Size: f.size(bucket + "/" + e.name), StorageClass: "STANDARD"})
		}
	}
	res.KeyCount = end - start
	if end < len(matching) {
		res.IsTruncated = true
		res.NextContinuationToken = strconv.Itoa(end)
	}
	w.Header().Set("Content-Type", "application/xml")
	_, _ = w.Write([]byte(xml.Header))
	if err := xml.NewEncoder(w).Encode(res); err != nil {
		f.t.Errorf("encoding list result: %v", err)
	}
}

func (f *fakeS3) seen() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.requests...)
}

// counts returns the number of list and head requests seen.
func (f *fakeS3) counts() (lists, heads int) {
	lists, heads, _ = f.countsWithGets()
	return lists, heads
}

// countsWithGets returns the number of list, head and get requests seen.
func (f *fakeS3) countsWithGets() (lists, heads, gets int) {
	for _, r := range f.seen() {
		switch {
		case r.Method == http.MethodHead:
			heads++
		case r.URL.Query().Get("list-type") == "2":
			lists++
		default:
			gets++
		}
	}
	return lists, heads, gets
}

// newFakeS3Store starts the fake and returns a Store whose client talks to it.
func newFakeS3Store(t testing.TB, f *fakeS3) *Store {
	t.Helper()
	f.t = t
	if f.pageSize == 0 {
		f.pageSize = 2
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client := NewS3Client(S3Config{
		Endpoint:        srv.URL,
		Region:          "us-east-1",
		AccessKeyID:     "AKIDLAB",
		SecretAccessKey: "secret",
		MaxAttempts:     1,
		HTTPClient:      srv.Client(),
	})
	return &Store{S3: client}
}
