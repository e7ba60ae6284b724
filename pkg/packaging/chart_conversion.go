package packaging

import (
	"bytes"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// conversionCRDTemplate renders a CRD whose conversion webhook is the
// release's Service, trusting the chart's CA (or cert-manager's); with
// webhooks.enabled=false it converts nothing (strategy None). It goes in
// templates/webhooks.yaml, where $svc and $ca are defined. Its versions,
// most of a CRD, are taken from text, the CRD as rendered (crdTexts), not
// marshalled again.
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
			"cert-manager.io/inject-ca-from", "{{ .Release.Namespace }}/{{ "+child("serving-cert")+" }}")
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
			"        name: {{ $svc }}",
			"        namespace: {{ .Release.Namespace }}",
			"        path: " + strconv.Quote(path),
			"        port: {{ .Values.webhooks.port }}",
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
