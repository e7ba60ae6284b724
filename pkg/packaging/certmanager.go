package packaging

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// cert-manager objects come in two kinds. Those that serve the webhooks
// (the Certificate of the webhook Secret and its Issuer) stay in
// p.CertManager: the chart renders its own, switched by certManager.enabled,
// and OLM issues the bundle's. The others (kubebuilder's metrics serving
// certificate, say) are carried as they are, behind the same value.

// isCertManager reports an object of cert-manager's API.
func isCertManager(o *unstructured.Unstructured) bool {
	return o.GroupVersionKind().Group == "cert-manager.io"
}

// splitCertManager keeps the webhooks' cert-manager objects in
// p.CertManager and moves the others to p.Objects.
func (p *Project) splitCertManager() {
	secret := ""
	if p.Webhook != nil && p.Webhook.Certificates != CertsOperator {
		secret = p.Webhook.Secret
	}
	var keep, extra []*unstructured.Unstructured
	issuers := map[string]bool{}
	for _, o := range p.CertManager {
		s, _, _ := unstructured.NestedString(o.Object, "spec", "secretName")
		if o.GetKind() == "Certificate" && secret != "" && s == secret {
			keep = append(keep, o)
			n, _, _ := unstructured.NestedString(o.Object, "spec", "issuerRef", "name")
			issuers[n], issuers[p.NamePrefix+n] = true, true // kustomize may leave the reference unprefixed
		}
	}
	for _, o := range p.CertManager {
		switch {
		case slices.Contains(keep, o):
		case o.GetKind() != "Certificate" && issuers[o.GetName()]:
			keep = append(keep, o)
		default:
			extra = append(extra, o)
		}
	}
	p.CertManager = keep
	p.Objects = append(p.Objects, extra...)
	slices.SortFunc(p.Objects, compareObjects)
	for _, o := range extra {
		secret, _, _ := unstructured.NestedString(o.Object, "spec", "secretName")
		if o.GetKind() != "Certificate" || secret == "" {
			continue
		}
		for _, d := range append([]*unstructured.Unstructured{p.managerRaw}, p.Objects...) {
			if d != nil && slices.Contains(workloadKinds, d.GetKind()) && mountsSecret(d, secret) {
				p.warnf("Certificate %s issues Secret %s, which %s %s mounts: the chart renders it with certManager.enabled=true (cert-manager must be installed); without that the pod waits for the Secret", o.GetName(), secret, d.GetKind(), d.GetName())
			}
		}
	}
}

// mountsSecret reports a workload whose pods mount the Secret.
func mountsSecret(w *unstructured.Unstructured, secret string) bool {
	path := []string{"spec", "template", "spec", "volumes"}
	if w.GetKind() == "CronJob" {
		path = []string{"spec", "jobTemplate", "spec", "template", "spec", "volumes"}
	}
	vols, _, _ := unstructured.NestedSlice(w.Object, path...)
	return slices.ContainsFunc(vols, func(v any) bool {
		name, _, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName")
		return name == secret
	})
}

// webhookIssuers are the names of the Issuers of the webhooks' Certificate,
// which the chart's own Issuer replaces, with and without the overlay's
// prefix (kustomize may leave an issuerRef unprefixed).
func (p *Project) webhookIssuers() []string {
	var out []string
	for _, o := range p.CertManager {
		if o.GetKind() != "Certificate" {
			out = append(out, o.GetName(), strings.TrimPrefix(o.GetName(), p.NamePrefix))
		}
	}
	return out
}

// carriesCertManager reports cert-manager objects the chart carries as
// they are.
func (p *Project) carriesCertManager() bool {
	return slices.ContainsFunc(p.Objects, isCertManager)
}

// templateCertificate makes a Certificate's <service>.<namespace>.svc
// names the release's (kustomize filled them in with the overlay's), and
// its issuerRef too when kustomize left it unprefixed.
func (t *templater) templateCertificate(o *unstructured.Unstructured) {
	if ref, _, _ := unstructured.NestedString(o.Object, "spec", "issuerRef", "name"); ref != "" {
		if _, ok := t.renames[ref]; !ok {
			if expr, ok := t.renames[t.prefix+ref]; ok {
				_ = unstructured.SetNestedField(o.Object, t.token(expr), "spec", "issuerRef", "name")
			}
		}
	}
	names, ok, _ := unstructured.NestedStringSlice(o.Object, "spec", "dnsNames")
	if !ok {
		return
	}
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
		svc, rest, _ := strings.Cut(n, ".")
		expr, renamed := t.renames[svc]
		if !renamed {
			expr, renamed = t.renames[t.prefix+svc]
		}
		ns, tail, _ := strings.Cut(rest, ".")
		if renamed && (ns == t.namespace || ns == "system") { // "system" before kustomize sets the namespace
			out[i] = t.token(expr + ".{{ .Release.Namespace }}." + tail)
		}
	}
	_ = unstructured.SetNestedSlice(o.Object, out, "spec", "dnsNames")
}
