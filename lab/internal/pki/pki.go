// Package pki creates the certificates of the hermetic lab's Karmada control
// plane with Karmada's own certificate helpers (the ones `karmadactl init`
// uses) and client-go's key utilities. Nothing shells out to openssl or cfssl.
package pki

import (
	"crypto"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	karmadacert "github.com/karmada-io/karmada/pkg/karmadactl/cmdinit/cert"
)

// Names of the certificate/key pairs, written as <name>.crt and <name>.key.
const (
	CA                  = "ca"
	FrontProxyCA        = "front-proxy-ca"
	APIServer           = "karmada-apiserver"
	Admin               = "admin"
	FrontProxyClient    = "front-proxy-client"
	AggregatedAPIServer = "karmada-aggregated-apiserver"
	Webhook             = "karmada-webhook"
	RestoreWebhook      = "flink-restore-webhook"
	// Kyverno is the serving pair of Kyverno's admission controller
	// (LAB_RESTORE=kyverno), given to it in a Secret it does not manage.
	Kyverno = "kyverno"
	// RestoreWebhookClient is the client certificate the members' API servers
	// present to the restore webhook (their AdmissionConfiguration).
	RestoreWebhookClient = "flink-restore-webhook-client"
	ServiceAccount       = "sa" // sa.key / sa.pub
)

// RestoreWebhookClientCN is the CommonName of RestoreWebhookClient, the only
// client certificate the restore webhook accepts on /mutate.
const RestoreWebhookClientCN = "kube-apiserver-flink-restore-webhook-client"

// AggregatedAPIServerServiceName is the name the aggregator checks in the
// aggregated API server's certificate: <service>.<namespace>.svc.
const AggregatedAPIServerServiceName = "karmada-aggregated-apiserver.karmada-system.svc"

// Generate writes a complete set of certificates into dir. It is a no-op for a
// pair that already exists, so a lab that is brought up again keeps its CA.
func Generate(dir, host string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return fmt.Errorf("host %q is not an IP address", host)
	}
	caCert, caKey, err := ensureCA(dir, CA, "karmada")
	if err != nil {
		return err
	}
	fpCert, fpKey, err := ensureCA(dir, FrontProxyCA, "front-proxy-ca")
	if err != nil {
		return err
	}
	server := []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	client := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	leaves := []struct {
		name   string
		signer string
		cn     string
		org    []string
		usages []x509.ExtKeyUsage
		dns    []string
	}{
		{APIServer, CA, "karmada-apiserver", nil, server, []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "karmada-apiserver"}},
		{Admin, CA, "system:admin", []string{"system:masters"}, client, nil},
		{FrontProxyClient, FrontProxyCA, "front-proxy-client", nil, client, nil},
		{AggregatedAPIServer, CA, "karmada-aggregated-apiserver", nil, server, []string{"localhost", AggregatedAPIServerServiceName}},
		{Webhook, CA, "karmada-webhook", nil, server, []string{"localhost", "karmada-webhook.karmada-system.svc"}},
		{RestoreWebhook, CA, "flink-restore-webhook", nil, server, []string{"localhost"}},
		{Kyverno, CA, "kyverno-svc", nil, server, []string{"localhost", "kyverno-svc", "kyverno-svc.kyverno", "kyverno-svc.kyverno.svc"}},
		{RestoreWebhookClient, CA, RestoreWebhookClientCN, nil, client, nil},
	}
	for _, l := range leaves {
		if exists(dir, l.name) {
			continue
		}
		signerCert, signerKey := caCert, caKey
		if l.signer == FrontProxyCA {
			signerCert, signerKey = fpCert, fpKey
		}
		cfg := karmadacert.NewCertConfig(l.cn, l.org, cert.AltNames{DNSNames: l.dns}, nil)
		cfg.Usages = l.usages
		if l.usages[0] == x509.ExtKeyUsageServerAuth {
			cfg.AltNames.IPs = []net.IP{ip}
		}
		c, k, err := karmadacert.NewCertAndKey(signerCert, signerKey, cfg)
		if err != nil {
			return fmt.Errorf("certificate %s: %w", l.name, err)
		}
		if err := karmadacert.WriteCertAndKey(dir, l.name, c, &k); err != nil {
			return fmt.Errorf("writing %s: %w", l.name, err)
		}
	}
	return ensureServiceAccountKey(dir)
}

// CertFile and KeyFile name the files of pair name in dir.
func CertFile(dir, name string) string { return karmadacert.PathForCert(dir, name) }
func KeyFile(dir, name string) string  { return karmadacert.PathForKey(dir, name) }

// ServiceAccountKeyFiles are the private and public key files of the token signer.
func ServiceAccountKeyFiles(dir string) (private, public string) {
	return filepath.Join(dir, ServiceAccount+".key"), filepath.Join(dir, ServiceAccount+".pub")
}

func exists(dir, name string) bool {
	_, errC := os.Stat(CertFile(dir, name))
	_, errK := os.Stat(KeyFile(dir, name))
	return errC == nil && errK == nil
}

func ensureCA(dir, name, cn string) (*x509.Certificate, crypto.Signer, error) {
	if exists(dir, name) {
		certs, err := cert.CertsFromFile(CertFile(dir, name))
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", name, err)
		}
		key, err := keyutil.PrivateKeyFromFile(KeyFile(dir, name))
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s key: %w", name, err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, nil, fmt.Errorf("%s key is not a signer", name)
		}
		return certs[0], signer, nil
	}
	c, k, err := karmadacert.NewCACertAndKey(cn)
	if err != nil {
		return nil, nil, err
	}
	if err := karmadacert.WriteCertAndKey(dir, name, c, k); err != nil {
		return nil, nil, err
	}
	return c, *k, nil
}

func ensureServiceAccountKey(dir string) error {
	priv, pub := ServiceAccountKeyFiles(dir)
	if _, err := os.Stat(priv); err == nil {
		return nil
	}
	key, err := karmadacert.GeneratePrivateKey(x509.RSA)
	if err != nil {
		return err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	pubPEM, err := encodePublicKeyPEM(key.Public())
	if err != nil {
		return err
	}
	if err := keyutil.WriteKey(priv, keyPEM); err != nil {
		return err
	}
	return os.WriteFile(pub, pubPEM, 0o600)
}

// ServingPair writes into dir the lab's CA (ca.crt, ca.key; kept if it
// exists) and a serving pair name signed by it for the DNS names, for a
// webhook the lab runs in a cluster where no cert-manager issues one. An
// existing pair is kept.
func ServingPair(dir, name, cn string, dns []string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	caCert, caKey, err := ensureCA(dir, CA, "failover-lab")
	if err != nil {
		return err
	}
	if exists(dir, name) {
		return nil
	}
	cfg := karmadacert.NewCertConfig(cn, nil, cert.AltNames{DNSNames: dns}, nil)
	cfg.Usages = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	c, k, err := karmadacert.NewCertAndKey(caCert, caKey, cfg)
	if err != nil {
		return fmt.Errorf("certificate %s: %w", name, err)
	}
	if err := karmadacert.WriteCertAndKey(dir, name, c, &k); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}
