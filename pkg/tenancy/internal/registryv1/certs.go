package registryv1

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"slices"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
)

// Webhook certificates of bundle operators: the controller is their CA.
// Certificates last a year and are issued again, with a new CA, once less
// than a third of that is left; the new caBundle and serving certificate
// roll out as one release upgrade.
const (
	WebhookCertLifetime = 365 * 24 * time.Hour
	webhookCertRenew    = WebhookCertLifetime / 3
)

// WebhookCerts are a CA and a serving certificate per webhook Deployment.
type WebhookCerts struct {
	CACert, CAKey []byte // PEM
	Serving       map[string]CertPair
}

type CertPair struct{ Cert, Key []byte } // PEM

// webhookServiceName is the Service OLM puts in front of a webhook
// Deployment, as the webhook configurations name it.
func webhookServiceName(deployment string) string {
	return (&operatorsv1alpha1.WebhookDescription{DeploymentName: deployment}).DomainName() + "-service"
}

// certDNSNames are the names a webhook Deployment's certificate serves.
func certDNSNames(deployment, ns string) []string {
	svc := webhookServiceName(deployment)
	return []string{svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local"}
}

// IssueWebhookCerts makes a new CA and a serving certificate for each
// Deployment's Service in ns.
func IssueWebhookCerts(now time.Time, ns string, deployments []string) (*WebhookCerts, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "opctl tenancy webhook CA"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(WebhookCertLifetime),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	w := &WebhookCerts{CACert: pemBlock("CERTIFICATE", caDER), Serving: map[string]CertPair{}}
	if w.CAKey, err = keyPEM(caKey); err != nil {
		return nil, err
	}
	for _, d := range deployments {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		names := certDNSNames(d, ns)
		leaf := &x509.Certificate{
			SerialNumber: serial(), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
			NotBefore: now.Add(-time.Minute), NotAfter: now.Add(WebhookCertLifetime),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
		if err != nil {
			return nil, err
		}
		kp, err := keyPEM(key)
		if err != nil {
			return nil, err
		}
		w.Serving[d] = CertPair{Cert: pemBlock("CERTIFICATE", der), Key: kp}
	}
	return w, nil
}

// Current reports whether w serves every Deployment of ns under its CA
// with more than webhookCertRenew left.
func (w *WebhookCerts) Current(now time.Time, ns string, deployments []string) bool {
	ca, err := parseCert(w.CACert)
	if err != nil || ca.NotAfter.Sub(now) < webhookCertRenew || len(w.Serving) != len(deployments) {
		return false
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	for _, d := range deployments {
		pair, ok := w.Serving[d]
		if !ok {
			return false
		}
		leaf, err := parseCert(pair.Cert)
		if err != nil || leaf.NotAfter.Sub(now) < webhookCertRenew || !slices.Equal(leaf.DNSNames, certDNSNames(d, ns)) {
			return false
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: leaf.DNSNames[0], CurrentTime: now}); err != nil {
			return false
		}
	}
	return true
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func keyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pemBlock("EC PRIVATE KEY", der), nil
}

func parseCert(p []byte) (*x509.Certificate, error) {
	b, _ := pem.Decode(p)
	if b == nil {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(b.Bytes)
}
