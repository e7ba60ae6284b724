package guard

import (
	"fmt"
	"strings"
	"testing"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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

// TestWebhooksNarrowed: a configuration NarrowWebhooks narrowed, as the
// API server returns it, is narrowed; one without the match condition (an
// older controller's), or narrowed to namespaces the tenant no longer has
// all of, is not until narrowed again; other kinds are.
func TestWebhooksNarrowed(t *testing.T) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(chartWebhook), &u.Object); err != nil {
		t.Fatal(err)
	}
	if WebhooksNarrowed(u, []string{"team-a"}) {
		t.Errorf("the chart's configuration counts as narrowed")
	}
	NarrowWebhooks(u, []string{"team-a"})
	// The API server's form: typed, defaulted fields aside.
	typed := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
		t.Fatal(err)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		t.Fatal(err)
	}
	live := &unstructured.Unstructured{Object: obj}
	if !WebhooksNarrowed(live, []string{"team-a"}) {
		t.Errorf("a narrowed configuration counts as not narrowed: %v", live.Object)
	}
	if WebhooksNarrowed(live, []string{"team-a", "team-a-2"}) {
		t.Errorf("a configuration narrowed to fewer namespaces' requests counts as narrowed to more")
	}
	old := live.DeepCopy()
	unstructured.RemoveNestedField(old.Object["webhooks"].([]any)[0].(map[string]any), "matchConditions")
	if WebhooksNarrowed(old, []string{"team-a"}) {
		t.Errorf("a configuration without %s counts as narrowed", TenantRequestsCondition)
	}
	NarrowWebhooks(old, []string{"team-a"})
	if !WebhooksNarrowed(old, []string{"team-a"}) {
		t.Errorf("narrowed again, it counts as not narrowed")
	}
	if !WebhooksNarrowed(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}, []string{"team-a"}) {
		t.Errorf("a ConfigMap counts as a webhook configuration not narrowed")
	}
}
