package packaging

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// webhookTemplate renders the webhook configurations with their serving
// certificate: from cert-manager (certManager.enabled: an Issuer, a
// Certificate and CA injection) or self-signed by Helm (genCA and
// genSignedCert, kept across upgrades with lookup). Nothing renders with
// webhooks.enabled=false.
func (p *Project) webhookTemplate(t *templater, pacs []PlatformAsCode, packed map[string]int, crdTexts map[string][]byte) (string, error) {
	child := func(suffix string) string { return fmt.Sprintf(`(include "%s.child" (list . %q))`, t.chart, suffix) }
	var b strings.Builder
	operator := p.Webhook.Certificates == CertsOperator
	fmt.Fprintf(&b, "{{- $svc := %s }}\n{{- $ns := .Release.Namespace }}\n{{- $ca := \"\" }}\n", child(strings.TrimPrefix(p.Webhook.Service, p.NamePrefix)))
	if operator {
		// The operator issues its certificate and patches caBundle.
		b.WriteString("{{- if .Values.webhooks.enabled }}\n")
	} else {
		p.certTemplate(&b, t, child)
	}
	for _, o := range p.Webhooks {
		c := o.DeepCopy()
		ann := c.GetAnnotations()
		delete(ann, "cert-manager.io/inject-ca-from")
		if len(ann) == 0 {
			ann = nil
		}
		c.SetAnnotations(ann)
		if !operator {
			p.injectCA(t, c, child)
		}
		hooks, _ := c.Object["webhooks"].([]any)
		for _, h := range hooks {
			if svc, ok, _ := unstructured.NestedMap(h.(map[string]any), "clientConfig", "service"); ok {
				// The first Service's port is webhooks.port; others keep theirs.
				svc["port"] = t.token("{{ .Values.webhooks.port }}")
				if name, _ := svc["name"].(string); name != p.Webhook.Service {
					if s := p.Webhook.webhookService(name); s != nil {
						svc["port"] = int64(s.Port)
					}
				}
				_ = unstructured.SetNestedMap(h.(map[string]any), svc, "clientConfig", "service")
			}
		}
		text, err := t.object(c, t.nameFor(o.GetName(), true), true)
		if err != nil {
			return "", err
		}
		b.WriteString("---\n" + text)
	}
	b.WriteString("{{- end }}\n")
	for _, crd := range p.conversionCRDs() {
		if _, ok := packed[crd.Name]; ok {
			continue // in a CRD chart of its own
		}
		text, err := p.conversionCRDTemplate(t, crd, pacs, crdTexts[crd.Name], child)
		if err != nil {
			return "", err
		}
		b.WriteString("---\n" + text)
	}
	return b.String(), nil
}

// certTemplate renders the serving certificate: cert-manager's Issuer and
// Certificate, or a Secret with a CA Helm generates and keeps.
func (p *Project) certTemplate(b *strings.Builder, t *templater, child func(string) string) {
	// The certificate covers every webhook Service: $svc and the others.
	names := []string{"$svc"}
	for _, s := range p.Webhook.Services[1:] {
		names = append(names, child(strings.TrimPrefix(s.Name, p.NamePrefix)))
	}
	fmt.Fprintf(b, `{{- if .Values.webhooks.enabled }}
{{- $secret := %[3]s }}
{{- $crt := "" }}
{{- $key := "" }}
{{- $dnsNames := list }}
{{- range $name := list %[7]s }}
{{- $dnsNames = append $dnsNames (printf "%%s.%%s.svc" $name $.Release.Namespace) }}
{{- $dnsNames = append $dnsNames (printf "%%s.%%s.svc.cluster.local" $name $.Release.Namespace) }}
{{- end }}
{{- if .Values.certManager.enabled }}
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  name: {{ %[5]s }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "%[4]s.labels" . | nindent 4 }}
spec:
  selfSigned: {}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: {{ %[1]s }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "%[4]s.labels" . | nindent 4 }}
spec:
  dnsNames:
  {{- range $dnsNames }}
  - {{ . }}
  {{- end }}
  issuerRef:
    kind: Issuer
    name: {{ %[5]s }}
  secretName: {{ $secret }}
{{- else }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace $secret }}
{{- if and $existing (index (default dict $existing.data) "ca.crt") }}
{{- $crt = index $existing.data "tls.crt" }}
{{- $key = index $existing.data "tls.key" }}
{{- $ca = index $existing.data "ca.crt" }}
{{- else }}
{{- $caCert := genCA %[6]s 3650 }}
{{- $cert := genSignedCert $svc nil $dnsNames 3650 $caCert }}
{{- $crt = $cert.Cert | b64enc }}
{{- $key = $cert.Key | b64enc }}
{{- $ca = $caCert.Cert | b64enc }}
{{- end }}
---
apiVersion: v1
kind: Secret
metadata:
  name: {{ $secret }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "%[4]s.labels" . | nindent 4 }}
type: kubernetes.io/tls
data:
  tls.crt: {{ $crt }}
  tls.key: {{ $key }}
  ca.crt: {{ $ca }}
{{- end }}
`, child("serving-cert"), child(strings.TrimPrefix(p.Webhook.Service, p.NamePrefix)), child(strings.TrimPrefix(p.Webhook.Secret, p.NamePrefix)), t.chart,
		child("selfsigned-issuer"), child("webhook-ca"), strings.Join(names, " "))
}

// injectCA makes a webhook configuration trust the chart's CA: cert-manager
// injects it, or caBundle carries the one Helm generated.
func (p *Project) injectCA(t *templater, c *unstructured.Unstructured, child func(string) string) {
	t.conditionalAnnotation(c.Object["metadata"].(map[string]any), ".Values.certManager.enabled",
		"cert-manager.io/inject-ca-from", "{{ .Release.Namespace }}/{{ "+child("serving-cert")+" }}")
	hooks, _ := c.Object["webhooks"].([]any)
	for _, h := range hooks {
		cc, _ := h.(map[string]any)["clientConfig"].(map[string]any)
		if cc == nil {
			continue
		}
		delete(cc, "caBundle")
		cc[t.line(func(indent int) string {
			pad := strings.Repeat(" ", indent)
			return fmt.Sprintf("%s{{- if not .Values.certManager.enabled }}\n%scaBundle: {{ $ca }}\n%s{{- end }}", pad, pad, pad)
		})] = ""
	}
}
