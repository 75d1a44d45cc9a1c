package main

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"

	"github.com/karmada-failover/lab/restore/cmd/flink-restore-webhook/app/options"
)

// writeServingCert writes a new self-signed certificate for host to certFile and keyFile.
func writeServingCert(t *testing.T, host, certFile, keyFile string) {
	t.Helper()
	cert, key, err := certutil.GenerateSelfSignedCertKey(host, []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Write to temporary files and rename, as cert-manager and kubelet's projected volumes replace
	// files, so that a reader never sees half a file.
	for file, data := range map[string][]byte{certFile: cert, keyFile: key} {
		if err := os.WriteFile(file+".new", data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(file+".new", file); err != nil {
			t.Fatal(err)
		}
	}
}

// servedCertHost connects and returns the common name of the certificate the server presents.
func servedCertHost(t *testing.T, addr string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // inspecting the served certificate
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
}

// TestServingCertificateRenewal checks that a renewed serving certificate is used for new
// connections without a restart.
func TestServingCertificateRenewal(t *testing.T) {
	dir := t.TempDir()
	o := &options.Options{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")}
	writeServingCert(t, "first.webhook.test", o.CertFile, o.KeyFile)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg, err := servingTLS(ctx, o, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	// GenerateSelfSignedCertKey names the certificate <host>@<unix time>.
	if got := servedCertHost(t, ln.Addr().String()); !strings.HasPrefix(got, "first.webhook.test@") {
		t.Fatalf("served %q, want the first certificate", got)
	}
	writeServingCert(t, "renewed.webhook.test", o.CertFile, o.KeyFile)
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := servedCertHost(t, ln.Addr().String())
		if strings.HasPrefix(got, "renewed.webhook.test@") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still serving %q 20s after the renewal", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestServingTLSRefusesAMissingKeyPair(t *testing.T) {
	dir := t.TempDir()
	o := &options.Options{CertFile: filepath.Join(dir, "none.crt"), KeyFile: filepath.Join(dir, "none.key")}
	if _, err := servingTLS(context.Background(), o, slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil {
		t.Fatal("servingTLS accepted a missing key pair")
	}
}
