package packaging

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// twoHooksDir is a project whose validating webhooks call two Services:
// the manager's and a policy webhook Deployment's, on another port.
const twoHooksDir = "testdata/twohooks"

// Each webhook keeps its Service and port in the chart, and the serving
// certificate covers every webhook Service, self-signed or cert-manager's.
func TestWebhookServicesChart(t *testing.T) {
	out, _ := packageTo(t, twoHooksDir, PackageOptions{})
	dir := filepath.Join(out, "charts", "twohooks-operator")
	for _, m := range lint.All(dir, nil, "t1", true).Messages {
		if m.Severity > support.InfoSev {
			t.Errorf("helm lint: %s", m)
		}
	}
	// With webhooks off, no workload mounts the serving Secret, which is
	// not rendered.
	for name, text := range render(t, dir, "t1", map[string]any{"webhooks": map[string]any{"enabled": false}}) {
		if strings.Contains(text, "webhook-server-cert") || strings.Contains(text, "serving-certs") {
			t.Errorf("%s: the serving certificate is mounted with webhooks off", name)
		}
	}
	names := []string{"kv-twohooks-operator-webhook-service", "kv-twohooks-operator-policy-webhook-service"}
	for _, certManager := range []bool{false, true} {
		t.Run(fmt.Sprintf("certManager=%v", certManager), func(t *testing.T) {
			docs := renderedDocs(t, render(t, dir, "t1", map[string]any{"certManager": map[string]any{"enabled": certManager}}))
			byKind := map[string][]map[string]any{}
			for _, d := range docs {
				byKind[d["kind"].(string)] = append(byKind[d["kind"].(string)], d)
			}
			called := map[string]bool{}
			for _, cfg := range slices.Concat(byKind["ValidatingWebhookConfiguration"], byKind["MutatingWebhookConfiguration"]) {
				for _, h := range cfg["webhooks"].([]any) {
					hook := h.(map[string]any)
					svc := hook["clientConfig"].(map[string]any)["service"].(map[string]any)
					called[svc["name"].(string)] = true
					checkWebhookTarget(t, hook["name"].(string), svc, byKind)
				}
			}
			if len(called) != 2 {
				t.Errorf("webhooks call Services %v, want both of %v", sortedKeys(called), names)
			}
			if certManager {
				certs := byKind["Certificate"]
				if len(certs) != 1 {
					t.Fatalf("%d Certificates, want 1", len(certs))
				}
				dns := certs[0]["spec"].(map[string]any)["dnsNames"].([]any)
				for _, n := range names {
					if !slices.Contains(dns, any(n+".t1.svc")) || !slices.Contains(dns, any(n+".t1.svc.cluster.local")) {
						t.Errorf("Certificate dnsNames %v lack %s", dns, n)
					}
				}
				return
			}
			secrets := byKind["Secret"]
			if len(secrets) != 1 {
				t.Fatalf("%d Secrets, want 1", len(secrets))
			}
			for _, n := range names {
				verifyServingCert(t, secrets[0]["data"].(map[string]any), n+".t1.svc")
			}
		})
	}
}

// checkWebhookTarget checks that a webhook's service reference names a
// rendered Service with that port, whose target port a container of a
// Deployment the Service selects exposes.
func checkWebhookTarget(t *testing.T, hook string, ref map[string]any, byKind map[string][]map[string]any) {
	t.Helper()
	i := slices.IndexFunc(byKind["Service"], func(s map[string]any) bool {
		return s["metadata"].(map[string]any)["name"] == ref["name"]
	})
	if i < 0 {
		t.Errorf("webhook %s calls Service %v, which the chart does not render", hook, ref["name"])
		return
	}
	spec := byKind["Service"][i]["spec"].(map[string]any)
	var target any
	for _, p := range spec["ports"].([]any) {
		if port := p.(map[string]any); toInt(port["port"]) == toInt(ref["port"]) {
			target = port["targetPort"]
		}
	}
	if target == nil {
		t.Errorf("webhook %s calls port %v of Service %v, which has ports %v", hook, ref["port"], ref["name"], spec["ports"])
		return
	}
	sel := spec["selector"].(map[string]any)
	for _, d := range byKind["Deployment"] {
		tmpl := d["spec"].(map[string]any)["template"].(map[string]any)
		labels := tmpl["metadata"].(map[string]any)["labels"].(map[string]any)
		selected := true
		for k, v := range sel {
			selected = selected && labels[k] == v
		}
		if !selected {
			continue
		}
		for _, c := range tmpl["spec"].(map[string]any)["containers"].([]any) {
			ports, _ := c.(map[string]any)["ports"].([]any)
			for _, p := range ports {
				cp := p.(map[string]any)
				if cp["name"] == target || (toInt(target) != 0 && toInt(cp["containerPort"]) == toInt(target)) {
					return
				}
			}
		}
	}
	t.Errorf("webhook %s: no Deployment that Service %v selects exposes its target port %v", hook, ref["name"], target)
}

// OLM serves each webhook from the Deployment its Service selects, at that
// Service's ports, and mounts the certificates itself.
func TestWebhookServicesBundle(t *testing.T) {
	out, _ := packageTo(t, twoHooksDir, PackageOptions{})
	dir := filepath.Join(out, "bundle", "twohooks-operator")
	for _, e := range validateBundle(t, dir) {
		t.Error(e)
	}
	csv := readCSV(t, dir, "twohooks-operator")
	want := map[string]string{
		"mwidget.kb.io":        "hook-controller-manager 443 9443",
		"vwidget.kb.io":        "hook-controller-manager 443 9443",
		"vwidget-policy.kb.io": "hook-policy-webhook 8443 policy-https",
	}
	got := map[string]string{}
	for _, d := range csv.Spec.WebhookDefinitions {
		got[d.GenerateName] = fmt.Sprintf("%s %d %s", d.DeploymentName, d.ContainerPort, d.TargetPort.String())
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("webhookdefinitions %v, want %v", got, want)
	}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if spec := d.Spec.Template.Spec; len(spec.Volumes) != 0 || len(spec.Containers[0].VolumeMounts) != 0 {
			t.Errorf("CSV deployment %s keeps the certificate volume: %v", d.Name, spec.Volumes)
		}
	}
}
