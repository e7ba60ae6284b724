package packaging

import (
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// conversionCRDTemplate renders a CRD whose conversion webhook is the
// release's Service, trusting the chart's CA (or cert-manager's); with
// webhooks.enabled=false it converts nothing (strategy None). It goes in
// templates/webhooks.yaml, where $svc and $ca are defined.
func (p *Project) conversionCRDTemplate(t *templater, crd *apiextensionsv1.CustomResourceDefinition, pacs []PlatformAsCode, child func(string) string) (string, error) {
	c := p.crdWithPAC(crd, pacs)
	conv := c.Spec.Conversion.Webhook
	path := "/convert"
	if conv.ClientConfig.Service.Path != nil {
		path = *conv.ClientConfig.Service.Path
	}
	versions, err := yaml.Marshal(conv.ConversionReviewVersions)
	if err != nil {
		return "", err
	}
	ann := c.GetAnnotations()
	delete(ann, "cert-manager.io/inject-ca-from")
	c.SetAnnotations(ann)
	c.Spec.Conversion = nil
	m, err := crdMap(c)
	if err != nil {
		return "", err
	}
	operator := p.Webhook.Certificates == CertsOperator
	if !operator {
		t.conditionalAnnotation(m["metadata"].(map[string]any), "and .Values.webhooks.enabled .Values.certManager.enabled",
			"cert-manager.io/inject-ca-from", "{{ .Release.Namespace }}/{{ "+child("serving-cert")+" }}")
	}
	// The CRD's own Service: $svc at webhooks.port, or another webhook
	// Service of the release at its port.
	svcName, port := "{{ $svc }}", "{{ .Values.webhooks.port }}"
	if name := p.conversionService(crd); name != p.Webhook.Service {
		if s := p.Webhook.webhookService(name); s != nil {
			svcName, port = "{{ "+child(strings.TrimPrefix(name, p.NamePrefix))+" }}", strconv.Itoa(int(s.Port))
		}
	}
	spec := m["spec"].(map[string]any)
	spec[t.line(func(indent int) string {
		pad := strings.Repeat(" ", indent)
		lines := []string{
			"conversion:",
			"  {{- if .Values.webhooks.enabled }}",
			"  strategy: Webhook",
			"  webhook:",
			"    clientConfig:",
			"      service:",
			"        name: " + svcName,
			"        namespace: {{ .Release.Namespace }}",
			"        path: " + strconv.Quote(path),
			"        port: " + port,
		}
		if !operator {
			lines = append(lines, "      {{- if not .Values.certManager.enabled }}", "      caBundle: {{ $ca }}", "      {{- end }}")
		}
		lines = append(lines, "    conversionReviewVersions:")
		for _, l := range strings.Split(strings.TrimSpace(string(versions)), "\n") {
			lines = append(lines, "    "+l)
		}
		lines = append(lines, "  {{- else }}", "  strategy: None", "  {{- end }}")
		for i := range lines {
			lines[i] = pad + lines[i]
		}
		return strings.Join(lines, "\n")
	})] = ""
	return crdTemplate(t, m)
}

// conversionService is the overlay name of the Service that converts crd.
func (p *Project) conversionService(crd *apiextensionsv1.CustomResourceDefinition) string {
	name := crd.Spec.Conversion.Webhook.ClientConfig.Service.Name
	if !p.hasService(name) && p.hasService(p.NamePrefix+name) {
		name = p.NamePrefix + name // kustomize left the reference unprefixed
	}
	return name
}
