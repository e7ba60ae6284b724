package guard

import (
	"fmt"
	"strings"
	"testing"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const chartWebhook = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: kv-mutating}
webhooks:
- name: mpod.kb.io
  namespaceSelector: {matchLabels: {webhooks: enabled}}
  rules:
  - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  - {apiGroups: [rbac.authorization.k8s.io], apiVersions: [v1], operations: [CREATE], resources: [clusterrolebindings], scope: "*"}
`

func TestNarrowWebhooks(t *testing.T) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(chartWebhook), &u.Object); err != nil {
		t.Fatal(err)
	}
	NarrowWebhooks(u, []string{"team-a", "team-a-2"})
	once := fmt.Sprint(u.Object)
	NarrowWebhooks(u, []string{"team-a", "team-a-2"})
	if fmt.Sprint(u.Object) != once {
		t.Errorf("narrowing twice differs from once")
	}
	hook := u.Object["webhooks"].([]any)[0].(map[string]any)
	for _, r := range hook["rules"].([]any) {
		if r.(map[string]any)["scope"] != "Namespaced" {
			t.Errorf("rule %v, want scope Namespaced", r)
		}
	}
	ns := hook["namespaceSelector"].(map[string]any)
	if fmt.Sprint(ns["matchLabels"]) != "map[webhooks:enabled]" || !strings.Contains(fmt.Sprint(ns["matchExpressions"]), "key:kubernetes.io/metadata.name operator:In values:[team-a team-a-2]") {
		t.Errorf("namespaceSelector %v: want the chart's labels and the tenant's namespaces", ns)
	}
	if obj := fmt.Sprint(hook["objectSelector"]); !strings.Contains(obj, "key:"+tenancyv1.LabelTenant+" operator:DoesNotExist") {
		t.Errorf("objectSelector %s: want the platform's objects left out", obj)
	}
	conds, _ := hook["matchConditions"].([]any)
	if len(conds) != 1 || conds[0].(map[string]any)["name"] != TenantRequestsCondition || conds[0].(map[string]any)["expression"] != TenantRequests([]string{"team-a", "team-a-2"}) {
		t.Errorf("matchConditions %v, want the tenant's requests only, once", conds)
	}
	for _, want := range []string{"'system:serviceaccount:team-a:'", "'system:serviceaccount:team-a-2:tenant-operators'", "system:masters"} {
		if !strings.Contains(TenantRequests([]string{"team-a", "team-a-2"}), want) {
			t.Errorf("TenantRequests lacks %s", want)
		}
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "webhooks": []any{map[string]any{}}}}
	NarrowWebhooks(cm, []string{"team-a"})
	if fmt.Sprint(cm.Object["webhooks"]) != "[map[]]" {
		t.Errorf("a ConfigMap was changed: %v", cm.Object)
	}
}

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
