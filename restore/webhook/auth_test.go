package webhook

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// testCA issues client certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

func (ca *testCA) clientCert(t *testing.T, cn string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// stubReviewer authenticates tokens "token-<username>".
type stubReviewer struct{ calls int }

func (s *stubReviewer) ReviewToken(_ context.Context, token string) (authenticationv1.UserInfo, error) {
	s.calls++
	if u, ok := strings.CutPrefix(token, "token-"); ok {
		return authenticationv1.UserInfo{Username: u}, nil
	}
	return authenticationv1.UserInfo{}, errors.New("token has expired")
}

// tlsServer serves the handler over TLS, verifying client certificates of
// ca when presented (as the binary does with --client-ca-file).
func tlsServer(t *testing.T, ca *testCA, auth CallerAuth) *httptest.Server {
	t.Helper()
	h, _ := newTestHandler(t, newFakeLocator(), func(c *Config) { c.Auth = auth })
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{ClientCAs: ca.pool, ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// client returns an HTTP client trusting srv, presenting certs.
func client(srv *httptest.Server, certs ...tls.Certificate) *http.Client {
	c := srv.Client()
	tr := c.Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.Certificates = certs
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func admissionBody(t *testing.T) []byte {
	t.Helper()
	b, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  admissionRequest("", karmadaSA, fd(marker(), karmadaAnn(), conf(ckptDir), job()), nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const locateQuery = "/locate?namespace=team-a&checkpointDir=" + ckptDir + "&jobId=" + oldJob

func TestCallerAuth(t *testing.T) {
	ca := newTestCA(t, "apiserver-client-ca")
	apiserver := ca.clientCert(t, "kube-apiserver")
	stranger := ca.clientCert(t, "stranger")
	// A CA with the same name: the client presents its certificate, the
	// server's verification fails the handshake. A CA with another name: the
	// client presents nothing (not among the server's acceptable CAs).
	forged := newTestCA(t, "apiserver-client-ca").clientCert(t, "kube-apiserver")
	foreign := newTestCA(t, "someone-else").clientCert(t, "kube-apiserver")

	strict := CallerAuth{Tokens: &stubReviewer{}, LocateUsers: []string{DefaultLocateCaller}, RatePerSecond: -1}
	pinned := strict
	pinned.ClientCertCNs = []string{"kube-apiserver"}
	lab := CallerAuth{AllowAnonymous: []string{EndpointMutate}, Tokens: &stubReviewer{}, LocateUsers: []string{DefaultLocateCaller}, RatePerSecond: -1}

	cases := []struct {
		name    string
		auth    CallerAuth
		method  string
		path    string
		certs   []tls.Certificate
		token   string
		code    int    // 0: the TLS handshake fails
		errText string // substring of the refusal
	}{
		{name: "mutate without credentials", auth: strict, method: "POST", path: "/mutate", code: 401, errText: "/mutate requires a client certificate signed by --client-ca-file"},
		{name: "mutate with the API server's certificate", auth: strict, method: "POST", path: "/mutate", certs: []tls.Certificate{apiserver}, code: 200},
		{name: "mutate with a forged certificate", auth: strict, method: "POST", path: "/mutate", certs: []tls.Certificate{forged}, code: 0},
		{name: "mutate with a certificate of another CA", auth: strict, method: "POST", path: "/mutate", certs: []tls.Certificate{foreign}, code: 401},
		{name: "mutate with a pinned CN", auth: pinned, method: "POST", path: "/mutate", certs: []tls.Certificate{apiserver}, code: 200},
		{name: "mutate with another CN", auth: pinned, method: "POST", path: "/mutate", certs: []tls.Certificate{stranger}, code: 403, errText: `CN "stranger" is not allowed`},
		{name: "mutate with a bearer token", auth: strict, method: "POST", path: "/mutate", token: "token-" + DefaultLocateCaller, code: 401, errText: "does not accept bearer tokens"},
		{name: "locate without credentials", auth: strict, method: "GET", path: locateQuery, code: 401, errText: "or a ServiceAccount bearer token"},
		{name: "locate with Kyverno's token", auth: strict, method: "GET", path: locateQuery, token: "token-" + DefaultLocateCaller, code: 200},
		{name: "locate with another ServiceAccount's token", auth: strict, method: "GET", path: locateQuery, token: "token-system:serviceaccount:team-a:default", code: 403, errText: "may not call /locate"},
		{name: "locate with a bad token", auth: strict, method: "GET", path: locateQuery, token: "garbage", code: 401, errText: "token has expired"},
		{name: "locate with a client certificate", auth: strict, method: "GET", path: locateQuery, certs: []tls.Certificate{stranger}, code: 200},
		{name: "locate, tokens not configured", auth: CallerAuth{RatePerSecond: -1}, method: "GET", path: locateQuery, token: "token-" + DefaultLocateCaller, code: 401},
		{name: "lab: anonymous mutate", auth: lab, method: "POST", path: "/mutate", code: 200},
		{name: "lab: anonymous locate still refused", auth: lab, method: "GET", path: locateQuery, code: 401},
		{name: "lab: a bad token is refused even where anonymous is allowed", auth: lab, method: "POST", path: "/mutate", token: "garbage", code: 401},
		{name: "healthz needs nothing", auth: strict, method: "GET", path: "/healthz", code: 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := tlsServer(t, ca, c.auth)
			var body io.Reader
			if c.method == "POST" {
				body = bytes.NewReader(admissionBody(t))
			}
			req, _ := http.NewRequest(c.method, srv.URL+c.path, body)
			if c.token != "" {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			resp, err := client(srv, c.certs...).Do(req)
			if c.code == 0 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("HTTP %d, want a failed TLS handshake", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.code || !strings.Contains(string(b), c.errText) {
				t.Errorf("HTTP %d %s, want %d containing %q", resp.StatusCode, b, c.code, c.errText)
			}
			if c.code == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

func TestRateLimit(t *testing.T) {
	ca := newTestCA(t, "ca")
	srv := tlsServer(t, ca, CallerAuth{AllowAnonymous: []string{EndpointLocate}, RatePerSecond: 0.001, Burst: 3})
	c := client(srv)
	var codes []int
	for range 5 {
		resp, err := c.Get(srv.URL + locateQuery)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
	}
	if want := []int{200, 200, 200, 429, 429}; !equalInts(codes, want) {
		t.Errorf("codes %v, want %v", codes, want)
	}
	// another caller (a client certificate) has its own bucket, but the
	// address is shared: still limited.
	resp, err := client(srv, ca.clientCert(t, "other")).Get(srv.URL + locateQuery)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("same address, other caller: HTTP %d, want 429", resp.StatusCode)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// tokenReviewAPI serves the API server's TokenReview endpoint: "good" is
// DefaultLocateCaller, any other token is refused; with fail set it answers 500.
type tokenReviewAPI struct {
	calls atomic.Int32
	fail  atomic.Bool
}

func (a *tokenReviewAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/apis/authentication.k8s.io/v1/tokenreviews" {
		http.NotFound(w, r)
		return
	}
	a.calls.Add(1)
	if a.fail.Load() {
		http.Error(w, "etcd is down", http.StatusInternalServerError)
		return
	}
	var tr authenticationv1.TokenReview
	if err := json.NewDecoder(r.Body).Decode(&tr); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if tr.Spec.Token == "good" {
		tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{
			Username: DefaultLocateCaller, Groups: []string{"system:serviceaccounts"}}}
	} else {
		tr.Status = authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&tr)
}

func TestKubeTokenReviewer(t *testing.T) {
	api := &tokenReviewAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	client, err := authenticationv1client.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	const ttl = 300 * time.Millisecond
	k, err := NewKubeTokenReviewer(client, ttl)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 3 {
		u, err := k.ReviewToken(ctx, "good")
		if err != nil || u.Username != DefaultLocateCaller || !slices.Equal(u.Groups, []string{"system:serviceaccounts"}) {
			t.Fatalf("review %d: %+v %v", i, u, err)
		}
	}
	if n := api.calls.Load(); n != 1 {
		t.Errorf("TokenReviews = %d, want 1 (cached)", n)
	}
	time.Sleep(2 * ttl)
	if _, err := k.ReviewToken(ctx, "good"); err != nil || api.calls.Load() != 2 {
		t.Errorf("after the TTL: %v, %d TokenReviews, want 2", err, api.calls.Load())
	}
	if _, err := k.ReviewToken(ctx, "bad"); err == nil || !strings.Contains(err.Error(), "invalid bearer token") {
		t.Errorf("bad token: %v", err)
	}
	if _, err := k.ReviewToken(ctx, "bad"); err == nil || api.calls.Load() != 4 {
		t.Errorf("failures are not cached: %v, %d TokenReviews", err, api.calls.Load())
	}
	api.fail.Store(true)
	before := api.calls.Load()
	if _, err := k.ReviewToken(ctx, "other"); err == nil || !strings.Contains(err.Error(), "TokenReview") {
		t.Errorf("API error: %v", err)
	}
	if n := api.calls.Load() - before; n < 2 {
		t.Errorf("a TokenReview the API server fails is retried: %d calls", n)
	}
}
