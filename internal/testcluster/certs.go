package testcluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the certificate authority and the keys of one control plane.
type pki struct {
	caCert *x509.Certificate
	caKey  crypto.Signer
	caPEM  []byte
}

// credential is a PEM certificate and key pair.
type credential struct {
	certPEM, keyPEM []byte
}

func newPKI() (*pki, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "opctl-testcluster-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("creating CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing CA certificate: %w", err)
	}
	return &pki{caCert: cert, caKey: key, caPEM: pemBlock("CERTIFICATE", der)}, nil
}

// serving issues the API server's serving certificate.
func (p *pki) serving() (credential, error) {
	return p.issue(pkix.Name{CommonName: "kube-apiserver"},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
		x509.ExtKeyUsageServerAuth)
}

// client issues a client certificate for user in groups.
func (p *pki) client(user string, groups ...string) (credential, error) {
	return p.issue(pkix.Name{CommonName: user, Organization: groups}, nil, nil, x509.ExtKeyUsageClientAuth)
}

func (p *pki) issue(subject pkix.Name, dns []string, ips []net.IP, usage x509.ExtKeyUsage) (credential, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return credential{}, fmt.Errorf("generating key for %s: %w", subject.CommonName, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return credential{}, fmt.Errorf("generating serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      subject,
		DNSNames:     dns,
		IPAddresses:  ips,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		return credential{}, fmt.Errorf("issuing certificate for %s: %w", subject.CommonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return credential{}, fmt.Errorf("encoding key for %s: %w", subject.CommonName, err)
	}
	return credential{certPEM: pemBlock("CERTIFICATE", der), keyPEM: pemBlock("PRIVATE KEY", keyDER)}, nil
}

// serviceAccountKey returns a PEM RSA key pair for signing ServiceAccount
// tokens.
func serviceAccountKey() (private, public []byte, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, fmt.Errorf("generating service account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding service account public key: %w", err)
	}
	return pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)), pemBlock("PUBLIC KEY", pub), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// writeFiles writes name → content pairs into dir with owner-only modes.
func writeFiles(dir string, files map[string][]byte) error {
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), content, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}
