package packaging

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// conversionCRDTemplate renders a CRD whose conversion webhook is the
// release's Service, trusting the chart's CA (or cert-manager's); with
// webhooks.enabled=false it converts nothing (strategy None). It goes in
// templates/webhooks.yaml, or in a packed CRD chart (packedConversionCRD),
// where $svc, $ns and $ca are defined. Its versions, most of a CRD, are
// taken from text, the CRD as rendered (crdTexts), not marshalled again.
func (p *Project) conversionCRDTemplate(t *templater, crd *apiextensionsv1.CustomResourceDefinition, pacs []PlatformAsCode, text []byte, child func(string) string) (string, error) {
	c := p.crdWithPAC(crd, pacs)
	tail := crdVersionsText(text)
	if tail != "" {
		c.Spec.Versions = nil
	}
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
			"cert-manager.io/inject-ca-from", "{{ $ns }}/{{ "+child("serving-cert")+" }}")
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
			"        namespace: {{ $ns }}",
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
	if tail != "" {
		delete(spec, "versions")
	}
	return crdTemplate(t, m, escapeActions.Replace(tail))
}

// crdVersionsText is the versions of a rendered CRD's text: sorted keys
// put spec last and versions last in it, so they run to the end. "" when
// the text is not laid out so.
func crdVersionsText(text []byte) string {
	const key = "\nspec:\n"
	i := bytes.Index(text, []byte(key))
	if i < 0 {
		return ""
	}
	j := bytes.Index(text[i:], []byte("\n  versions:\n"))
	if j < 0 {
		return ""
	}
	return string(text[i+j+1:])
}

// conversionService is the overlay name of the Service that converts crd.
func (p *Project) conversionService(crd *apiextensionsv1.CustomResourceDefinition) string {
	name := crd.Spec.Conversion.Webhook.ClientConfig.Service.Name
	if !p.hasService(name) && p.hasService(p.NamePrefix+name) {
		name = p.NamePrefix + name // kustomize left the reference unprefixed
	}
	return name
}

// packedConversionCRD renders a CRD a webhook converts for a packed CRD
// chart: its conversion calls the webhook Service of the release that
// conversion.release names (in conversion.namespace), trusting that
// release's CA, read from its Secret (installing against a cluster where
// it holds none fails; helm template and lint, which reach no cluster,
// render no caBundle), or cert-manager's. The main chart's helpers name
// the release's objects as that chart does.
func (p *Project) packedConversionCRD(t *templater, crd *apiextensionsv1.CustomResourceDefinition, pacs []PlatformAsCode, text []byte) (string, error) {
	child := func(suffix string) string {
		return fmt.Sprintf(`(include "%s.child" (list $main %q))`, t.chart, suffix)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{{- $ns := default .Release.Namespace .Values.conversion.namespace }}
{{- $main := dict "Release" (dict "Name" .Values.conversion.release) "Chart" (dict "Name" %[1]q) "Values" (dict "nameOverride" .Values.conversion.nameOverride "fullnameOverride" .Values.conversion.fullnameOverride) }}
{{- $svc := "" }}
{{- $ca := .Values.conversion.caBundle }}
{{- if .Values.webhooks.enabled }}
{{- $_ := required "conversion.release: set it to the release name of the %[1]s chart, whose webhook Service converts these CRDs (or set webhooks.enabled=false)" .Values.conversion.release }}
{{- $svc = %[2]s }}
`, t.chart, child(strings.TrimPrefix(p.Webhook.Service, p.NamePrefix)))
	if p.Webhook.Certificates != CertsOperator {
		fmt.Fprintf(&b, `{{- if and (not .Values.certManager.enabled) (not $ca) }}
{{- $secret := lookup "v1" "Secret" $ns %[1]s }}
{{- $ca = index (default dict (get $secret "data")) "ca.crt" }}
{{- if and (not $ca) (lookup "v1" "Namespace" "" "kube-system") }}
{{- fail (printf "conversion: Secret %%s/%%s holds no ca.crt: install release %%s of the %[2]s chart first (its webhook certificate), or set conversion.caBundle, or certManager.enabled=true" $ns %[1]s .Values.conversion.release) }}
{{- end }}
{{- end }}
`, child(strings.TrimPrefix(p.Webhook.Secret, p.NamePrefix)), t.chart)
	}
	b.WriteString("{{- end }}\n")
	crdText, err := p.conversionCRDTemplate(t, crd, pacs, text, child)
	if err != nil {
		return "", err
	}
	return b.String() + crdText, nil
}
