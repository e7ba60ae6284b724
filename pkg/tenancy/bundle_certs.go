package tenancy

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Webhook certificates of bundle operators: the controller is their CA.
// Certificates last a year and are issued again, with a new CA, once less
// than a third of that is left; the new caBundle and serving certificate
// roll out as one release upgrade.
const (
	webhookCertLifetime = 365 * 24 * time.Hour
	webhookCertRenew    = webhookCertLifetime / 3
)

// webhookCerts are a CA and a serving certificate per webhook Deployment.
type webhookCerts struct {
	caCert, caKey []byte // PEM
	serving       map[string]certPair
}

type certPair struct{ cert, key []byte } // PEM

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

// issueWebhookCerts makes a new CA and a serving certificate for each
// Deployment's Service in ns.
func issueWebhookCerts(now time.Time, ns string, deployments []string) (*webhookCerts, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "opctl tenancy webhook CA"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(webhookCertLifetime),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	w := &webhookCerts{caCert: pemBlock("CERTIFICATE", caDER), serving: map[string]certPair{}}
	if w.caKey, err = keyPEM(caKey); err != nil {
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
			NotBefore: now.Add(-time.Minute), NotAfter: now.Add(webhookCertLifetime),
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
		w.serving[d] = certPair{cert: pemBlock("CERTIFICATE", der), key: kp}
	}
	return w, nil
}

// current reports whether w serves every Deployment of ns under its CA
// with more than webhookCertRenew left.
func (w *webhookCerts) current(now time.Time, ns string, deployments []string) bool {
	ca, err := parseCert(w.caCert)
	if err != nil || ca.NotAfter.Sub(now) < webhookCertRenew || len(w.serving) != len(deployments) {
		return false
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	for _, d := range deployments {
		pair, ok := w.serving[d]
		if !ok {
			return false
		}
		leaf, err := parseCert(pair.cert)
		if err != nil || leaf.NotAfter.Sub(now) < webhookCertRenew || !slices.Equal(leaf.DNSNames, certDNSNames(d, ns)) {
			return false
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: leaf.DNSNames[0], CurrentTime: now}); err != nil {
			return false
		}
	}
	return true
}

// certsSecretName is the Secret, in the controller's storage namespace,
// that keeps a release's webhook certificates: no tenant reads it.
func certsSecretName(tenant, release string) string {
	return "opctl-webhook-certs." + tenant + "." + release
}

// webhookCertsFor returns the release's certificates, issuing them when
// they are missing, for other Deployments, or due for renewal.
func (b *bundleBackend) webhookCertsFor(ctx context.Context, t *tenancyv1.Tenant, release string, deployments []string) (*webhookCerts, error) {
	ns, now := t.Spec.Namespaces[0], time.Now()
	key := client.ObjectKey{Namespace: b.opts.StorageNamespace, Name: certsSecretName(t.Name, release)}
	s := &corev1.Secret{}
	err := b.reader.Get(ctx, key, s)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading Secret %s: %w", key, err)
	}
	found := err == nil
	if found {
		w := &webhookCerts{caCert: s.Data["ca.crt"], caKey: s.Data["ca.key"], serving: map[string]certPair{}}
		for _, d := range deployments {
			if c, ok := s.Data[d+".crt"]; ok {
				w.serving[d] = certPair{cert: c, key: s.Data[d+".key"]}
			}
		}
		if w.current(now, ns, deployments) && len(s.Data) == 2+2*len(deployments) {
			return w, nil
		}
	}
	w, err := issueWebhookCerts(now, ns, deployments)
	if err != nil {
		return nil, fmt.Errorf("issuing webhook certificates: %w", err)
	}
	s.Data = map[string][]byte{"ca.crt": w.caCert, "ca.key": w.caKey}
	for d, p := range w.serving {
		s.Data[d+".crt"], s.Data[d+".key"] = p.cert, p.key
	}
	if found {
		err = b.client.Update(ctx, s)
	} else {
		s.ObjectMeta = metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{labelCertsOf: t.Name}}
		s.Type = corev1.SecretTypeOpaque
		err = b.client.Create(ctx, s)
	}
	if err != nil {
		return nil, fmt.Errorf("writing Secret %s: %w", key, err)
	}
	b.event(t, "Normal", "WebhookCertificatesIssued", "issued webhook certificates for %s, valid until %s", release, now.Add(webhookCertLifetime).Format(time.DateOnly))
	return w, nil
}

// labelCertsOf marks a certificates Secret with its Tenant.
const labelCertsOf = "tenancy.opctl.dev/webhook-certs-of"

// deleteWebhookCerts removes a release's certificates.
func (b *bundleBackend) deleteWebhookCerts(ctx context.Context, t *tenancyv1.Tenant, release string) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: b.opts.StorageNamespace, Name: certsSecretName(t.Name, release)}}
	if err := b.client.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
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
