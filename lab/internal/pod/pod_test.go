package pod

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParse(t *testing.T) {
	if e, err := ParseExpose("127.0.0.1:25120=9443"); err != nil || e != (Expose{Host: "127.0.0.1:25120", Pod: 9443}) {
		t.Errorf("ParseExpose = %+v, %v", e, err)
	}
	if r, err := ParseReach("443=127.0.0.1:25001"); err != nil || r != (Reach{Pod: 443, Host: "127.0.0.1:25001"}) {
		t.Errorf("ParseReach = %+v, %v", r, err)
	}
	for _, bad := range []struct {
		parse func(string) error
		in    string
		want  string
	}{
		{func(s string) error { _, err := ParseExpose(s); return err }, "0.0.0.0:25120=9443", "127.0.0.1 only"},
		{func(s string) error { _, err := ParseExpose(s); return err }, "127.0.0.1:25120", "want 127.0.0.1:HOST_PORT=POD_PORT"},
		{func(s string) error { _, err := ParseExpose(s); return err }, "127.0.0.1:25120=0", "want 1-65535"},
		{func(s string) error { _, err := ParseReach(s); return err }, "443=10.0.0.1:443", "127.0.0.1 only"},
		{func(s string) error { _, err := ParseReach(s); return err }, "x=127.0.0.1:1", "want 1-65535"},
		{func(s string) error { _, _, err := ParseServiceAccount(s); return err }, "kyverno", "NAMESPACE/NAME"},
		{func(s string) error { _, _, err := ParseServiceAccount(s); return err }, "a/b/c", "NAMESPACE/NAME"},
	} {
		if err := bad.parse(bad.in); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want an error with %q", bad.in, err, bad.want)
		}
	}
	s := Spec{Command: []string{"x"}, Expose: []Expose{{"127.0.0.1:1", 80}}, Reach: []Reach{{80, "127.0.0.1:2"}}}
	if err := s.validate(); err == nil || !strings.Contains(err.Error(), "both exposed and reached") {
		t.Errorf("a port exposed and reached: %v", err)
	}
	if err := (Spec{}).validate(); err == nil {
		t.Error("no command: no error")
	}
	s = Spec{Command: []string{"x"}, Token: &Token{Namespace: "a", Name: "b", TTL: time.Minute}}
	if err := s.validate(); err == nil || !strings.Contains(err.Error(), "10m") {
		t.Errorf("TTL below the API server's minimum: %v", err)
	}
}

type fakeTokens struct {
	calls   int
	seconds int64
	now     time.Time
	fail    bool
}

func (f *fakeTokens) CreateToken(_ context.Context, name string, tr *authenticationv1.TokenRequest, _ metav1.CreateOptions) (*authenticationv1.TokenRequest, error) {
	f.calls++
	if f.fail {
		return nil, os.ErrDeadlineExceeded
	}
	f.seconds = *tr.Spec.ExpirationSeconds
	out := tr.DeepCopy()
	out.Status.Token = name + "-token-" + string(rune('0'+f.calls))
	out.Status.ExpirationTimestamp = metav1.NewTime(f.now.Add(time.Duration(f.seconds) * time.Second))
	return out, nil
}

func TestVolumeRefresh(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	f := &fakeTokens{now: now}
	v := &volume{dir: dir, namespace: "kyverno", name: "kyverno-admission-controller", ttl: time.Hour, tokens: f, now: func() time.Time { return now }}
	next, err := v.refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if f.seconds != 3600 {
		t.Errorf("requested %d s, want 3600", f.seconds)
	}
	if want := now.Add(48 * time.Minute); !next.Equal(want) {
		t.Errorf("renew at %s, want %s (80 %% of the lifetime)", next, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, "token"))
	if err != nil || string(b) != "kyverno-admission-controller-token-1" {
		t.Errorf("token file = %q, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "token")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode = %v, %v; want 0600", fi.Mode(), err)
	}
	if _, err := v.refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "token")); string(b) != "kyverno-admission-controller-token-2" {
		t.Errorf("renewed token file = %q", b)
	}
	f.fail = true
	if _, err := v.refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "kyverno/kyverno-admission-controller") {
		t.Errorf("a failed TokenRequest: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "token")); string(b) != "kyverno-admission-controller-token-2" {
		t.Errorf("a failed renewal replaced the token: %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// TestRenewAfterSleep: a renewal time in the past (a machine that slept past
// it) renews at once, then waits for the next one.
func TestRenewAfterSleep(t *testing.T) {
	dir := t.TempDir()
	f := &fakeTokens{now: time.Now()}
	v := &volume{dir: dir, namespace: "kyverno", name: "sa", ttl: time.Hour, tokens: f, now: time.Now}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { v.renew(ctx, time.Now().Add(-time.Minute), 5*time.Millisecond); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b, _ := os.ReadFile(filepath.Join(dir, "token")); string(b) == "sa-token-1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the token was not renewed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	cancel()
	<-done
	if f.calls != 1 {
		t.Errorf("%d TokenRequests, want 1 (the next renewal is 48 min away)", f.calls)
	}
}
