// Command s3check proves an S3 endpoint works for the lab's checkpoint store, using
// only the standard library (requests are signed with AWS Signature V4 here).
// It creates a bucket (idempotent), puts an object, lists it by prefix, gets it back
// and compares the bytes. Path-style addressing, as SeaweedFS expects on loopback.
//
//	go run ./s3check -endpoint http://127.0.0.1:35336 -access-key ... -secret-key ...
package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"
)

var (
	endpoint  = flag.String("endpoint", "http://127.0.0.1:35336", "S3 endpoint URL")
	region    = flag.String("region", "us-east-1", "signing region")
	accessKey = flag.String("access-key", os.Getenv("AWS_ACCESS_KEY_ID"), "access key (default $AWS_ACCESS_KEY_ID)")
	secretKey = flag.String("secret-key", os.Getenv("AWS_SECRET_ACCESS_KEY"), "secret key (default $AWS_SECRET_ACCESS_KEY)")
	bucket    = flag.String("bucket", "flink-checkpoints", "bucket to create and use")
	key       = flag.String("key", "s3check/chk-1/_metadata", "object key to write")
)

func hmacSHA256(k []byte, s string) []byte {
	h := hmac.New(sha256.New, k)
	h.Write([]byte(s))
	return h.Sum(nil)
}
func sha256Hex(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// uriEncode encodes per SigV4: everything but unreserved characters, '/' kept if path.
func uriEncode(s string, path bool) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~', path && c == '/':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// do sends a SigV4-signed request: method, path ("/bucket/key"), query and body.
func do(method, path string, query url.Values, body []byte) (int, []byte, error) {
	u, err := url.Parse(*endpoint)
	if err != nil {
		return 0, nil, err
	}
	keys := make([]string, 0, len(query))
	for k := range query {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var qs []string
	for _, k := range keys {
		qs = append(qs, uriEncode(k, false)+"="+uriEncode(query.Get(k), false))
	}
	canonQuery := strings.Join(qs, "&")
	canonPath := uriEncode(path, true)

	now := time.Now().UTC()
	amzDate, day := now.Format("20060102T150405Z"), now.Format("20060102")
	payloadHash := sha256Hex(body)
	canonHeaders := "host:" + u.Host + "\nx-amz-content-sha256:" + payloadHash + "\nx-amz-date:" + amzDate + "\n"
	signed := "host;x-amz-content-sha256;x-amz-date"
	canonReq := strings.Join([]string{method, canonPath, canonQuery, canonHeaders, signed, payloadHash}, "\n")
	scope := day + "/" + *region + "/s3/aws4_request"
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + sha256Hex([]byte(canonReq))
	k := hmacSHA256([]byte("AWS4"+*secretKey), day)
	k = hmacSHA256(hmacSHA256(hmacSHA256(k, *region), "s3"), "aws4_request")
	sig := hex.EncodeToString(hmacSHA256(k, toSign))

	target := strings.TrimRight(*endpoint, "/") + canonPath
	if canonQuery != "" {
		target += "?" + canonQuery
	}
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("x-amz-date", amzDate)
	req.Header.Set("x-amz-content-sha256", payloadHash)
	req.Header.Set("Authorization", fmt.Sprintf("AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s", *accessKey, scope, signed, sig))
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

func must(step string, want []int, code int, body []byte, err error) []byte {
	if err != nil {
		fail("%s: %v", step, err)
	}
	for _, w := range want {
		if code == w {
			fmt.Printf("ok   %-28s HTTP %d\n", step, code)
			return body
		}
	}
	fail("%s: HTTP %d: %s", step, code, strings.TrimSpace(string(body)))
	return nil
}

func fail(format string, a ...any) { fmt.Fprintf(os.Stderr, "FAIL "+format+"\n", a...); os.Exit(1) }

func main() {
	flag.Parse()
	if *accessKey == "" || *secretKey == "" {
		fail("set -access-key and -secret-key (or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)")
	}
	b := "/" + *bucket

	// CreateBucket: 200 when new; 409 BucketAlreadyOwnedByYou/Exists when it is there.
	code, body, err := do(http.MethodPut, b, nil, nil)
	if err == nil && code == http.StatusConflict && bytes.Contains(body, []byte("BucketAlready")) {
		code = http.StatusOK
	}
	must("create bucket "+*bucket, []int{200}, code, body, err)
	code, body, err = do(http.MethodHead, b, nil, nil)
	must("head bucket", []int{200}, code, body, err)

	payload := []byte(fmt.Sprintf("checkpoint written by s3check at %s\n", time.Now().UTC().Format(time.RFC3339Nano)))
	code, body, err = do(http.MethodPut, b+"/"+*key, nil, payload)
	must("put "+*key, []int{200}, code, body, err)

	prefix := (*key)[:strings.LastIndex(*key, "/")+1]
	code, body, err = do(http.MethodGet, b, url.Values{"list-type": {"2"}, "prefix": {prefix}}, nil)
	body = must("list prefix "+prefix, []int{200}, code, body, err)
	var list struct {
		Contents []struct {
			Key  string
			Size int64
		}
	}
	if err := xml.Unmarshal(body, &list); err != nil {
		fail("list: %v", err)
	}
	found := false
	for _, c := range list.Contents {
		fmt.Printf("     listed %s (%d bytes)\n", c.Key, c.Size)
		found = found || c.Key == *key
	}
	if !found {
		fail("list: %s not listed under prefix %s", *key, prefix)
	}

	code, body, err = do(http.MethodGet, b+"/"+*key, nil, nil)
	body = must("get "+*key, []int{200}, code, body, err)
	if !bytes.Equal(body, payload) {
		fail("get: content differs: %q != %q", body, payload)
	}
	fmt.Println("ok   content round-trips; S3 endpoint", *endpoint, "works")
}
