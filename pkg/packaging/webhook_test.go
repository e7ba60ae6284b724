package packaging

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"sigs.k8s.io/yaml"
)

const webhookDir = "testdata/webhook"

// renderedDocs decodes every rendered document into a map.
func renderedDocs(t *testing.T, rendered map[string]string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, name := range sortedKeys(rendered) {
		if strings.HasSuffix(name, "NOTES.txt") {
			continue
		}
		for _, doc := range strings.Split(rendered[name], "\n---") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if m != nil {
				out = append(out, m)
			}
		}
	}
	return out
}

func TestWebhookChartModes(t *testing.T) {
	out, _ := packageTo(t, webhookDir, PackageOptions{})
	dir := filepath.Join(out, "charts", "hook-operator")
	for _, v := range []map[string]any{nil, {"certManager": map[string]any{"enabled": true}}, {"webhooks": map[string]any{"enabled": false}}} {
		for _, m := range lint.All(dir, v, "t1", true).Messages {
			if m.Severity > support.InfoSev {
				t.Errorf("helm lint %v: %s", v, m)
			}
		}
	}
	tests := []struct {
		name   string
		values map[string]any
		check  func(t *testing.T, kinds map[string]map[string]any, all string)
	}{
		{"self-signed by Helm", nil, func(t *testing.T, kinds map[string]map[string]any, all string) {
			secret := kinds["Secret"]
			if secret == nil || kinds["Certificate"] != nil {
				t.Fatalf("want a Secret and no Certificate, got %v", sortedKeys(kinds))
			}
			data := secret["data"].(map[string]any)
			for _, cfg := range []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
				hook := kinds[cfg]["webhooks"].([]any)[0].(map[string]any)
				if got := hook["clientConfig"].(map[string]any)["caBundle"]; got != data["ca.crt"] {
					t.Errorf("%s caBundle is not the Secret's CA", cfg)
				}
			}
			verifyServingCert(t, data, "kv-hook-operator-webhook-service.t1.svc")
			if strings.Contains(all, "inject-ca-from") {
				t.Errorf("cert-manager annotation rendered without cert-manager")
			}
		}},
		{"cert-manager", map[string]any{"certManager": map[string]any{"enabled": true}}, func(t *testing.T, kinds map[string]map[string]any, all string) {
			if kinds["Certificate"] == nil || kinds["Issuer"] == nil || kinds["Secret"] != nil {
				t.Fatalf("want Certificate and Issuer and no Secret, got %v", sortedKeys(kinds))
			}
			if !strings.Contains(all, "cert-manager.io/inject-ca-from: t1/kv-hook-operator-serving-cert") || strings.Contains(all, "caBundle") {
				t.Errorf("cert-manager wiring wrong")
			}
		}},
		{"webhooks off", map[string]any{"webhooks": map[string]any{"enabled": false}}, func(t *testing.T, kinds map[string]map[string]any, all string) {
			for _, k := range []string{"Secret", "Certificate", "Issuer", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"} {
				if kinds[k] != nil {
					t.Errorf("%s rendered with webhooks off", k)
				}
			}
			if strings.Contains(all, "webhook-service") || strings.Contains(all, "serving-certs") {
				t.Errorf("webhook Service or certificate volume rendered with webhooks off")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rendered := render(t, dir, "t1", tt.values)
			kinds := map[string]map[string]any{}
			var all []string
			for _, d := range renderedDocs(t, rendered) {
				kinds[d["kind"].(string)] = d
				b, _ := yaml.Marshal(d)
				all = append(all, string(b))
			}
			tt.check(t, kinds, strings.Join(all, "\n"))
		})
	}
}

// verifyServingCert checks that tls.crt is signed by ca.crt for dnsName.
func verifyServingCert(t *testing.T, data map[string]any, dnsName string) {
	t.Helper()
	parse := func(key string) *x509.Certificate {
		raw, err := base64.StdEncoding.DecodeString(data[key].(string))
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(raw)
		if block == nil {
			t.Fatalf("%s is not PEM", key)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	roots := x509.NewCertPool()
	roots.AddCert(parse("ca.crt"))
	if _, err := parse("tls.crt").Verify(x509.VerifyOptions{Roots: roots, DNSName: dnsName}); err != nil {
		t.Errorf("serving certificate does not verify for %s: %v", dnsName, err)
	}
}

func TestWebhookBundle(t *testing.T) {
	out, res := packageTo(t, webhookDir, PackageOptions{})
	dir := filepath.Join(out, "bundle", "hook-operator")
	for _, e := range validateBundle(t, dir) {
		t.Error(e)
	}
	for _, f := range res.Files {
		if strings.Contains(f, "bundle/") && (strings.Contains(f, "certificate") || strings.Contains(f, "issuer") || strings.Contains(f, "webhook-service")) {
			t.Errorf("bundle carries cert-manager wiring: %s", f)
		}
	}
	csv := readCSV(t, dir, "hook-operator")
	defs := csv.Spec.WebhookDefinitions
	if len(defs) != 2 {
		t.Fatalf("%d webhookdefinitions, want 2", len(defs))
	}
	for _, d := range defs {
		if d.DeploymentName != "hook-controller-manager" || d.ContainerPort != 443 || d.TargetPort.IntValue() != 9443 || d.WebhookPath == nil {
			t.Errorf("webhookdefinition %+v", d)
		}
	}
	spec := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec
	if len(spec.Volumes) != 0 || len(spec.Containers[0].VolumeMounts) != 0 {
		t.Errorf("the CSV deployment keeps the cert-manager volume: %v", spec.Volumes)
	}
}
