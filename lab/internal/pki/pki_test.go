package pki

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"
)

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatalf("%s: no PEM block", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGenerateServingCertificatesVerifyAndAreKept(t *testing.T) {
	dir := t.TempDir()
	if err := Generate(dir, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(readCert(t, CertFile(dir, CA)))
	for _, tc := range []struct{ name, dnsName string }{
		{APIServer, "127.0.0.1"},
		{APIServer, "localhost"},
		{AggregatedAPIServer, AggregatedAPIServerServiceName},
		{Webhook, "127.0.0.1"},
	} {
		c := readCert(t, CertFile(dir, tc.name))
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, DNSName: tc.dnsName, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("%s for %s: %v", tc.name, tc.dnsName, err)
		}
	}
	admin := readCert(t, CertFile(dir, Admin))
	if _, err := admin.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin client certificate: %v", err)
	}
	if len(admin.Subject.Organization) != 1 || admin.Subject.Organization[0] != "system:masters" {
		t.Errorf("admin organization %v, want system:masters", admin.Subject.Organization)
	}
	fp := x509.NewCertPool()
	fp.AddCert(readCert(t, CertFile(dir, FrontProxyCA)))
	if _, err := readCert(t, CertFile(dir, FrontProxyClient)).Verify(x509.VerifyOptions{Roots: fp, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("front-proxy-client is not signed by front-proxy-ca: %v", err)
	}

	before, _ := os.ReadFile(CertFile(dir, CA))
	if err := Generate(dir, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(CertFile(dir, CA))
	if !bytes.Equal(before, after) {
		t.Fatal("a second Generate replaced the CA")
	}
	if err := Generate(t.TempDir(), "not-an-ip"); err == nil {
		t.Fatal("Generate accepted a host that is not an IP")
	}
}

func TestServingPairVerifiesForItsNamesAndIsKept(t *testing.T) {
	dir := t.TempDir()
	names := []string{"flink-restore-webhook.flink-restore.svc", "flink-restore-webhook.flink-restore.svc.cluster.local"}
	if err := ServingPair(dir, RestoreWebhook, "flink-restore-webhook", names); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(readCert(t, CertFile(dir, CA)))
	leaf := readCert(t, CertFile(dir, RestoreWebhook))
	for _, n := range names {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: n, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "other.flink-restore.svc", Roots: roots}); err == nil {
		t.Error("the pair verifies for a name it was not issued for")
	}
	before, _ := os.ReadFile(CertFile(dir, RestoreWebhook))
	if err := ServingPair(dir, RestoreWebhook, "flink-restore-webhook", names); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(CertFile(dir, RestoreWebhook)); !bytes.Equal(before, after) {
		t.Error("a second call replaced the pair")
	}
}
