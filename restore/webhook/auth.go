package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	tokencache "k8s.io/apiserver/pkg/authentication/token/cache"
	tokenwebhook "k8s.io/apiserver/plugin/pkg/authenticator/token/webhook"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
)

// Endpoints that CallerAuth.AllowAnonymous can open to unauthenticated
// callers.
const (
	EndpointMutate = "mutate"
	EndpointLocate = "locate"
)

// DefaultLocateCaller is the ServiceAccount of Kyverno's admission controller
// (Helm chart kyverno, release namespace kyverno), which calls /locate.
const DefaultLocateCaller = "system:serviceaccount:kyverno:kyverno-admission-controller"

// Defaults of the per-caller rate limit.
const (
	DefaultRatePerSecond = 20
	DefaultRateBurst     = 50
	// maxLimiters bounds the rate limiter table; when full it starts over.
	maxLimiters = 10000
)

// TokenReviewer authenticates a bearer token (a ServiceAccount token) and
// returns whom it belongs to.
type TokenReviewer interface {
	ReviewToken(ctx context.Context, token string) (authenticationv1.UserInfo, error)
}

// CallerAuth decides who may call /mutate and /locate:
//   - /mutate: a client certificate verified against the server's client CA
//     (the API server's, configured in its AdmissionConfiguration);
//   - /locate: such a client certificate, or a bearer token that Tokens
//     authenticates and whose user is in LocateUsers.
//
// Every caller is rate limited, by address before authentication and by
// identity after it.
type CallerAuth struct {
	// AllowAnonymous lists endpoints (EndpointMutate, EndpointLocate) that
	// also accept callers without credentials. For labs only.
	AllowAnonymous []string
	// ClientCertCNs, when set, limits client certificates to these
	// CommonNames; otherwise any certificate the client CA verifies is
	// accepted.
	ClientCertCNs []string
	// Tokens authenticates bearer tokens on /locate; nil refuses them.
	Tokens TokenReviewer
	// LocateUsers are the token users allowed on /locate; empty allows any
	// authenticated user.
	LocateUsers []string
	// RatePerSecond and Burst limit each caller; 0 means the defaults, a
	// negative RatePerSecond disables the limit.
	RatePerSecond float64
	Burst         int
}

func (a *CallerAuth) validate() error {
	for _, e := range a.AllowAnonymous {
		if e != EndpointMutate && e != EndpointLocate {
			return fmt.Errorf("insecure-allow-anonymous: unknown endpoint %q (want %s or %s)", e, EndpointMutate, EndpointLocate)
		}
	}
	if a.RatePerSecond == 0 {
		a.RatePerSecond = DefaultRatePerSecond
	}
	if a.Burst <= 0 {
		a.Burst = DefaultRateBurst
	}
	return nil
}

// authError is a refused call: 401 (no or bad credentials), 403 (not
// allowed) or 429 (rate limited).
type authError struct {
	code int
	msg  string
}

func (e *authError) Error() string { return e.msg }

// guard authenticates and rate limits calls to one endpoint.
type guard struct {
	auth     CallerAuth
	limiters *limiterTable
}

func newGuard(a CallerAuth) *guard {
	return &guard{auth: a, limiters: newLimiterTable(a.RatePerSecond, a.Burst)}
}

// check returns the caller's identity, or why the call is refused.
func (g *guard) check(r *http.Request, endpoint string) (string, *authError) {
	if !g.limiters.allow("addr " + remoteHost(r)) {
		return "", &authError{http.StatusTooManyRequests, "too many requests from " + remoteHost(r) + "; retry later"}
	}
	who, err := g.authenticate(r, endpoint)
	if err != nil {
		return "", err
	}
	if !g.limiters.allow("caller " + who) {
		return "", &authError{http.StatusTooManyRequests, "too many requests from " + who + "; retry later"}
	}
	return who, nil
}

func (g *guard) authenticate(r *http.Request, endpoint string) (string, *authError) {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		cn := r.TLS.VerifiedChains[0][0].Subject.CommonName
		if len(g.auth.ClientCertCNs) > 0 && !slices.Contains(g.auth.ClientCertCNs, cn) {
			return "", &authError{http.StatusForbidden, fmt.Sprintf("client certificate CN %q is not allowed; add it with --client-cert-cn", cn)}
		}
		return "certificate " + cn, nil
	}
	if token, ok := bearerToken(r); ok {
		return g.authenticateToken(r.Context(), endpoint, token)
	}
	if slices.Contains(g.auth.AllowAnonymous, endpoint) {
		return "anonymous " + remoteHost(r), nil
	}
	how := "a client certificate signed by --client-ca-file"
	if endpoint == EndpointLocate {
		how += " or a ServiceAccount bearer token"
	}
	return "", &authError{http.StatusUnauthorized, fmt.Sprintf("/%s requires %s (labs: --insecure-allow-anonymous=%s)", endpoint, how, endpoint)}
}

func (g *guard) authenticateToken(ctx context.Context, endpoint, token string) (string, *authError) {
	switch {
	case endpoint != EndpointLocate:
		return "", &authError{http.StatusUnauthorized, fmt.Sprintf("/%s does not accept bearer tokens; the API server must present a client certificate signed by --client-ca-file", endpoint)}
	case g.auth.Tokens == nil:
		return "", &authError{http.StatusUnauthorized, "bearer tokens cannot be checked: the webhook has no kube client for TokenReview (--kubeconfig, or run it in a pod); use a client certificate signed by --client-ca-file"}
	}
	u, err := g.auth.Tokens.ReviewToken(ctx, token)
	if err != nil {
		return "", &authError{http.StatusUnauthorized, "bearer token rejected: " + err.Error()}
	}
	if len(g.auth.LocateUsers) > 0 && !slices.Contains(g.auth.LocateUsers, u.Username) {
		return "", &authError{http.StatusForbidden, fmt.Sprintf("%s may not call /locate; allow it with --locate-allowed-username", u.Username)}
	}
	return "user " + u.Username, nil
}

func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func remoteHost(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// limiterTable holds one token bucket per key.
type limiterTable struct {
	limit rate.Limit
	burst int
	mu    sync.Mutex
	m     map[string]*rate.Limiter
}

func newLimiterTable(perSecond float64, burst int) *limiterTable {
	limit := rate.Limit(perSecond)
	if perSecond < 0 {
		limit = rate.Inf
	}
	return &limiterTable{limit: limit, burst: burst, m: map[string]*rate.Limiter{}}
}

func (t *limiterTable) allow(key string) bool {
	t.mu.Lock()
	l, ok := t.m[key]
	if !ok {
		if len(t.m) >= maxLimiters {
			clear(t.m)
		}
		l = rate.NewLimiter(t.limit, t.burst)
		t.m[key] = l
	}
	t.mu.Unlock()
	return l.Allow()
}

// DefaultTokenReviewTTL is how long a successful TokenReview is remembered.
const DefaultTokenReviewTTL = time.Minute

// NewKubeTokenReviewer authenticates bearer tokens with the API server's
// TokenReview API (RBAC: create tokenreviews, e.g. ClusterRole
// system:auth-delegator) as Kubernetes' aggregated API servers do in their
// delegated authentication: k8s.io/apiserver's TokenReview authenticator
// behind its token cache. Successful reviews are remembered for ttl (0 means
// DefaultTokenReviewTTL), failures are not; a review that fails at the API
// server is retried briefly.
func NewKubeTokenReviewer(client authenticationv1client.AuthenticationV1Interface, ttl time.Duration) (TokenReviewer, error) {
	if ttl <= 0 {
		ttl = DefaultTokenReviewTTL
	}
	noMetrics := tokenwebhook.AuthenticatorMetrics{
		RecordRequestTotal:   func(context.Context, string) {},
		RecordRequestLatency: func(context.Context, string, float64) {},
	}
	retry := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 3}
	wh, err := tokenwebhook.NewFromInterface(client, nil, retry, 5*time.Second, noMetrics)
	if err != nil {
		return nil, fmt.Errorf("TokenReview authenticator: %w", err)
	}
	return tokenReviewer{tokencache.New(wh, false, ttl, 0)}, nil
}

// tokenReviewer adapts an authenticator.Token to TokenReviewer.
type tokenReviewer struct{ token authenticator.Token }

// ReviewToken implements TokenReviewer.
func (t tokenReviewer) ReviewToken(ctx context.Context, token string) (authenticationv1.UserInfo, error) {
	resp, ok, err := t.token.AuthenticateToken(ctx, token)
	switch {
	case err != nil:
		return authenticationv1.UserInfo{}, fmt.Errorf("TokenReview: %w", err)
	case !ok || resp == nil || resp.User == nil:
		return authenticationv1.UserInfo{}, errors.New("TokenReview: not authenticated")
	}
	u := authenticationv1.UserInfo{Username: resp.User.GetName(), UID: resp.User.GetUID(), Groups: resp.User.GetGroups()}
	for k, v := range resp.User.GetExtra() {
		if u.Extra == nil {
			u.Extra = map[string]authenticationv1.ExtraValue{}
		}
		u.Extra[k] = v
	}
	return u, nil
}

// refuse answers a refused call.
func refuse(w http.ResponseWriter, endpoint string, e *authError) {
	if e.code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	if e.code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="flink-restore-webhook"`)
	}
	if endpoint == EndpointLocate {
		writeJSON(w, e.code, LocateResponse{Error: e.msg})
		return
	}
	http.Error(w, "flink-restore-webhook: "+e.msg, e.code)
}
