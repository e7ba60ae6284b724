package packaging

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cert-manager objects that do not serve webhooks (kubebuilder's metrics
// certificate) are carried behind certManager.enabled, with the release's
// names in their dnsNames, Secret and issuer; a project with no webhooks
// at all is no longer refused for them.
func TestCertManagerBeyondWebhooks(t *testing.T) {
	const metricsCert = "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: metrics-certs\n  namespace: system\nspec:\n  dnsNames:\n  - controller-manager-metrics.system.svc\n  issuerRef:\n    kind: Issuer\n    name: selfsigned-issuer\n  secretName: metrics-server-cert\n"
	const issuer = "---\napiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata:\n  name: selfsigned-issuer\n  namespace: system\nspec:\n  selfSigned: {}\n"
	tests := []struct {
		name, project, dir string
		files              map[string]string
		// want are texts of the Certificate's template; warn of a warning.
		want []string
		warn string
	}{
		{"metrics only, no webhooks (was refused)", sampleDir, "sample-operator", map[string]string{
			"config/certmanager/certificate.yaml":   metricsCert + issuer,
			"config/certmanager/kustomization.yaml": "resources:\n- certificate.yaml\n",
			"config/default/kustomization.yaml":     "+- ../certmanager\n",
		}, []string{"{{- if .Values.certManager.enabled }}", `{{ include "sample-operator.child" (list . "controller-manager-metrics") }}.{{ .Release.Namespace }}.svc`,
			`secretName: {{ include "sample-operator.child" (list . "metrics-server-cert") }}`, `name: {{ include "sample-operator.child" (list . "selfsigned-issuer") }}`}, ""},
		{"metrics beside the webhooks' own", filepath.Join("testdata", "webhook"), "hook-operator", map[string]string{
			"config/certmanager/metrics.yaml":       metricsCert,
			"config/certmanager/kustomization.yaml": "+- metrics.yaml\n",
		}, []string{"{{- if .Values.certManager.enabled }}", `name: {{ include "hook-operator.child" (list . "selfsigned-issuer") }}`}, ""},
		{"the manager mounts the Secret", sampleDir, "sample-operator", map[string]string{
			"config/certmanager/certificate.yaml":   metricsCert + issuer,
			"config/certmanager/kustomization.yaml": "resources:\n- certificate.yaml\n",
			"config/default/kustomization.yaml":     "+- ../certmanager\n",
			"config/manager/manager.yaml":           "=      containers:\n=      volumes:\n      - name: metrics-certs\n        secret:\n          secretName: metrics-server-cert\n      containers:\n",
		}, nil, "Certificate kvstore-metrics-certs issues Secret metrics-server-cert, which Deployment kvstore-controller-manager mounts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyProject(t, tt.project)
			for f, text := range tt.files {
				if edit, ok := strings.CutPrefix(text, "="); ok { // "=from\n=to": replace
					from, to, _ := strings.Cut(edit, "\n=")
					text = strings.Replace(string(readFile(t, filepath.Join(dir, f))), from, to, 1)
				} else if more, ok := strings.CutPrefix(text, "+"); ok {
					text = string(readFile(t, filepath.Join(dir, f)))
					if strings.HasPrefix(more, "-") && strings.Contains(text, "resources:\n") {
						text = strings.Replace(text, "resources:\n", "resources:\n"+more, 1)
					} else {
						text += more
					}
				}
				mustWrite(t, filepath.Join(dir, f), text)
			}
			out, res := packageTo(t, dir, PackageOptions{})
			if tt.want != nil {
				cert := string(readFile(t, filepath.Join(out, "charts", tt.dir, "templates", "certificate-metrics-certs.yaml")))
				for _, w := range tt.want {
					if !strings.Contains(cert, w) {
						t.Errorf("the Certificate's template lacks %q:\n%s", w, cert)
					}
				}
				if !strings.Contains(string(readFile(t, filepath.Join(out, "charts", tt.dir, "values.yaml"))), "certManager:\n") {
					t.Error("values.yaml has no certManager")
				}
			}
			if tt.warn != "" && !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, tt.warn) }) {
				t.Errorf("warnings %q, want one holding %q", res.Warnings, tt.warn)
			}
		})
	}
}
