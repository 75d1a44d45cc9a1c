package checkpoint

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeS3 is a minimal in-process S3 endpoint that implements ListObjectsV2
// (path-style GET /<bucket>?list-type=2&prefix=…&continuation-token=…) with
// paging, returning keys in S3's lexicographic order.
type fakeS3 struct {
	t        *testing.T
	pageSize int
	// objects: bucket -> keys
	objects map[string][]string
	// failWith makes every request fail with this HTTP status and S3 code.
	failStatus int
	failCode   string

	mu       sync.Mutex
	requests []*http.Request
}

type listResult struct {
	XMLName               xml.Name    `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListBucketResult"`
	Name                  string      `xml:"Name"`
	Prefix                string      `xml:"Prefix"`
	KeyCount              int         `xml:"KeyCount"`
	MaxKeys               int         `xml:"MaxKeys"`
	IsTruncated           bool        `xml:"IsTruncated"`
	Contents              []listEntry `xml:"Contents"`
	ContinuationToken     string      `xml:"ContinuationToken,omitempty"`
	NextContinuationToken string      `xml:"NextContinuationToken,omitempty"`
}

type listEntry struct {
	Key          string `xml:"Key"`
	Size         int    `xml:"Size"`
	StorageClass string `xml:"StorageClass"`
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.Clone(r.Context()))
	f.mu.Unlock()
	if f.failStatus != 0 {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(f.failStatus)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>injected</Message><RequestId>1</RequestId></Error>`, f.failCode)
		return
	}
	q := r.URL.Query()
	if r.Method != http.MethodGet || q.Get("list-type") != "2" {
		http.Error(w, "only ListObjectsV2 is implemented", http.StatusNotImplemented)
		return
	}
	bucket := strings.Trim(r.URL.Path, "/")
	keys, ok := f.objects[bucket]
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchBucket</Code><Message>no bucket</Message></Error>`)
		return
	}
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	prefix := q.Get("prefix")
	var matching []string
	for _, k := range sorted {
		if strings.HasPrefix(k, prefix) {
			matching = append(matching, k)
		}
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
	res := listResult{Name: bucket, Prefix: prefix, MaxKeys: f.pageSize, ContinuationToken: q.Get("continuation-token")}
	for _, k := range matching[start:end] {
		res.Contents = append(res.Contents, listEntry{Key: k, Size: 1, StorageClass: "STANDARD"})
	}
	res.KeyCount = len(res.Contents)
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

// newFakeS3Store starts the fake and returns a Store whose client talks to it.
func newFakeS3Store(t *testing.T, f *fakeS3) *Store {
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
