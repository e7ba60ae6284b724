package policy

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestConversionWebhookRefused(t *testing.T) {
	plain := &apiextensionsv1.CustomResourceDefinition{}
	plain.Name = "widgets.example.com"
	converted := plain.DeepCopy()
	converted.Name = "gadgets.example.com"
	converted.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter}
	if err := ConversionWebhook([]*apiextensionsv1.CustomResourceDefinition{plain}); err != nil {
		t.Errorf("a CRD without conversion: %v", err)
	}
	if err := ConversionWebhook([]*apiextensionsv1.CustomResourceDefinition{plain, converted}); err == nil || !strings.Contains(err.Error(), "gadgets.example.com") {
		t.Errorf("a CRD converted by a webhook: %v, want it named", err)
	}
}
