package packaging

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

const conversionDir = "testdata/conversion"

// The chart points each converted CRD at the release's webhook Service,
// with the CA its admission webhooks trust, or cert-manager's injection.
func TestConversionChart(t *testing.T) {
	out, _ := packageTo(t, conversionDir, PackageOptions{})
	dir := filepath.Join(out, "charts", "conv-operator")
	for _, tc := range []struct {
		name   string
		values map[string]any
	}{
		{"helm CA", nil},
		{"cert-manager", map[string]any{"certManager": map[string]any{"enabled": true}}},
		{"webhooks off", map[string]any{"webhooks": map[string]any{"enabled": false}}},
		{"webhook port", map[string]any{"webhooks": map[string]any{"port": 8443}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rendered := render(t, dir, "ns", tc.values)
			var crd apiextensionsv1.CustomResourceDefinition
			renderedObject(t, rendered, "CustomResourceDefinition", "widgets.conv.example.com", &crd)
			conv := crd.Spec.Conversion
			if tc.name == "webhooks off" {
				if conv == nil || conv.Strategy != apiextensionsv1.NoneConverter {
					t.Fatalf("conversion %+v, want strategy None", conv)
				}
				return
			}
			if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter {
				t.Fatalf("conversion %+v, want a webhook", conv)
			}
			svc := conv.Webhook.ClientConfig.Service
			wantPort := int32(443)
			if tc.name == "webhook port" {
				wantPort = 8443
			}
			if svc.Name != "kv-conv-operator-webhook-service" || svc.Namespace != "ns" || *svc.Path != "/convert" || *svc.Port != wantPort {
				t.Errorf("conversion service %s/%s%s:%d, want ns/kv-conv-operator-webhook-service/convert:%d", svc.Namespace, svc.Name, *svc.Path, *svc.Port, wantPort)
			}
			var vwc admissionregistrationv1.ValidatingWebhookConfiguration
			renderedObject(t, rendered, "ValidatingWebhookConfiguration", "validating", &vwc)
			if p := vwc.Webhooks[0].ClientConfig.Service.Port; p == nil || *p != wantPort {
				t.Errorf("admission webhook port %v, want %d", p, wantPort)
			}
			injected := crd.Annotations["cert-manager.io/inject-ca-from"]
			if tc.name == "cert-manager" {
				if injected != "ns/kv-conv-operator-serving-cert" || len(conv.Webhook.ClientConfig.CABundle) != 0 {
					t.Errorf("cert-manager: inject-ca-from %q, caBundle %d bytes", injected, len(conv.Webhook.ClientConfig.CABundle))
				}
				return
			}
			if injected != "" || string(conv.Webhook.ClientConfig.CABundle) != string(vwc.Webhooks[0].ClientConfig.CABundle) || len(conv.Webhook.ClientConfig.CABundle) == 0 {
				t.Errorf("the CRD's caBundle (%d bytes) is not the admission webhooks' CA", len(conv.Webhook.ClientConfig.CABundle))
			}
		})
	}
	// The CRD without conversion stays in templates/crds.
	if _, ok := tree(t, dir)["templates/crds/gadgets.conv.example.com.yaml"]; !ok {
		t.Error("gadgets CRD not under templates/crds")
	}
}

func TestConversionNeedsTemplatedCRDs(t *testing.T) {
	for _, mode := range []string{CRDsSeparateChart, CRDsDir} {
		_, err := Package(context.Background(), conversionDir, PackageOptions{Out: t.TempDir(), PerTarget: map[string]TargetOptions{"chart": &ChartOptions{CRDs: mode}}})
		if err == nil || !strings.Contains(err.Error(), "widgets.conv.example.com is converted by a webhook") || !strings.Contains(err.Error(), "--crds templated") {
			t.Errorf("--crds %s: %v", mode, err)
		}
	}
}

// OLM gets a ConversionWebhook definition and an AllNamespaces-only CSV.
func TestConversionBundle(t *testing.T) {
	out, _ := packageTo(t, conversionDir, PackageOptions{})
	dir := filepath.Join(out, "bundle", "conv-operator")
	for _, e := range validateBundle(t, dir) {
		t.Error(e)
	}
	csv := readCSV(t, dir, "conv-operator")
	var conv []operatorsv1alpha1.WebhookDescription
	for _, d := range csv.Spec.WebhookDefinitions {
		if d.Type == operatorsv1alpha1.ConversionWebhook {
			conv = append(conv, d)
		}
	}
	if len(conv) != 1 || strings.Join(conv[0].ConversionCRDs, ",") != "widgets.conv.example.com" || *conv[0].WebhookPath != "/convert" || conv[0].TargetPort.IntValue() != 9443 {
		t.Errorf("conversion webhook definitions %+v", conv)
	}
	for _, m := range csv.Spec.InstallModes {
		if m.Supported != (m.Type == operatorsv1alpha1.InstallModeTypeAllNamespaces) {
			t.Errorf("install mode %s supported=%t; OLM needs AllNamespaces only for conversion webhooks", m.Type, m.Supported)
		}
	}
}
