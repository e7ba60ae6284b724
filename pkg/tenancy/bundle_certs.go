package tenancy

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/registryv1"
)

// certsSecretName is the Secret, in the controller's storage namespace,
// that keeps a release's webhook certificates: no tenant reads it.
func certsSecretName(tenant, release string) string {
	return "opctl-webhook-certs." + tenant + "." + release
}

// webhookCertsFor returns the release's certificates, issuing them when
// they are missing, for other Deployments, or due for renewal.
func (b *bundleBackend) webhookCertsFor(ctx context.Context, t *tenancyv1.Tenant, release string, deployments []string) (*registryv1.WebhookCerts, error) {
	ns, now := t.Spec.Namespaces[0], time.Now()
	key := client.ObjectKey{Namespace: b.storageNamespace, Name: certsSecretName(t.Name, release)}
	s := &corev1.Secret{}
	err := b.reader.Get(ctx, key, s)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading Secret %s: %w", key, err)
	}
	found := err == nil
	if found {
		w := &registryv1.WebhookCerts{CACert: s.Data["ca.crt"], CAKey: s.Data["ca.key"], Serving: map[string]registryv1.CertPair{}}
		for _, d := range deployments {
			if c, ok := s.Data[d+".crt"]; ok {
				w.Serving[d] = registryv1.CertPair{Cert: c, Key: s.Data[d+".key"]}
			}
		}
		if w.Current(now, ns, deployments) && len(s.Data) == 2+2*len(deployments) {
			return w, nil
		}
	}
	w, err := registryv1.IssueWebhookCerts(now, ns, deployments)
	if err != nil {
		return nil, fmt.Errorf("issuing webhook certificates: %w", err)
	}
	s.Data = map[string][]byte{"ca.crt": w.CACert, "ca.key": w.CAKey}
	for d, p := range w.Serving {
		s.Data[d+".crt"], s.Data[d+".key"] = p.Cert, p.Key
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
	b.event(t, "Normal", "WebhookCertificatesIssued", "issued webhook certificates for %s, valid until %s", release, now.Add(registryv1.WebhookCertLifetime).Format(time.DateOnly))
	return w, nil
}

// labelCertsOf marks a certificates Secret with its Tenant.
const labelCertsOf = "tenancy.opctl.dev/webhook-certs-of"

// deleteWebhookCerts removes a release's certificates.
func (b *bundleBackend) deleteWebhookCerts(ctx context.Context, t *tenancyv1.Tenant, release string) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: b.storageNamespace, Name: certsSecretName(t.Name, release)}}
	if err := b.client.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}
