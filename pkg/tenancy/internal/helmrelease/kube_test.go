package helmrelease

import (
	"reflect"
	"testing"

	"helm.sh/helm/v3/pkg/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// TestDriftMemoCreated: an object Helm created counts as matching the
// manifest at the resourceVersion the API server returned, under the key
// drift correction looks it up by; other kinds, and objects without a
// resourceVersion, are not remembered.
func TestDriftMemoCreated(t *testing.T) {
	const manifest = `---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: manager
rules: []
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
`
	tenant := &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Spec: tenancyv1.TenantSpec{Namespaces: []string{"ns"}}}
	objs := driftObjects(manifest, "ns", tenant, map[string]string{tenancyv1.LabelTenant: "t"}, func(schema.GroupVersionKind) bool { return true }).Objs
	if len(objs) != 2 || !objs[0].watched || objs[1].watched {
		t.Fatalf("drift objects %+v, want the Role, watched, and the ConfigMap", objs)
	}
	made := func(apiVersion, kind, name, rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetNamespace("ns")
		u.SetName(name)
		u.SetResourceVersion(rv)
		return u
	}
	cases := []struct {
		name    string
		created *unstructured.Unstructured
		key     string
		synced  bool
	}{
		{"the Role, created", made("rbac.authorization.k8s.io/v1", "Role", "manager", "42"), objs[0].key(), true},
		{"no resourceVersion", made("rbac.authorization.k8s.io/v1", "Role", "manager", ""), objs[0].key(), false},
		{"a kind no informer follows", made("v1", "ConfigMap", "settings", "43"), "ns/ConfigMap/settings", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &DriftMemo{Rv: map[string]string{}, Parsed: map[string]ParsedRelease{}}
			m.Created(tc.created)
			if got := m.synced(tc.key, tc.created.GetResourceVersion()) && len(m.Rv) > 0; got != tc.synced {
				t.Errorf("synced %v, want %v (memo %v)", got, tc.synced, m.Rv)
			}
		})
	}
}

// TestOfRelease: an uninstall deletes an object only with all of Helm's
// marks of that very release; hooks, which carry none, are told apart by
// their manifest.
func TestOfRelease(t *testing.T) {
	obj := func(labels, annotations map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetLabels(labels)
		u.SetAnnotations(annotations)
		return u
	}
	helm := map[string]string{guard.HelmManagedBy: "Helm"}
	marks := func(name, ns string) map[string]string {
		return map[string]string{guard.AnnotationReleaseName: name, guard.AnnotationReleaseNamespace: ns}
	}
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"the release's", obj(helm, marks("kv", "ns")), true},
		{"another release's", obj(helm, marks("other", "ns")), false},
		{"a release of the same name elsewhere", obj(helm, marks("kv", "ns2")), false},
		{"not Helm's", obj(nil, marks("kv", "ns")), false},
		{"unmarked", obj(helm, nil), false},
	}
	for _, tc := range cases {
		if got := ofRelease(tc.obj, "kv", "ns"); got != tc.want {
			t.Errorf("%s: ofRelease %v, want %v", tc.name, got, tc.want)
		}
	}
	if !isHook(obj(nil, map[string]string{"helm.sh/hook": "pre-delete"})) || isHook(obj(helm, marks("kv", "ns"))) {
		t.Error("isHook does not tell a hook from a release object")
	}
}

// TestNarrowBuilt: a manifest Helm builds for a tenant's release (a
// rollback's target, rendered by an older controller) has its webhook
// configurations narrowed to the tenant, and drift correction knows them
// as the release's webhook configurations to keep narrowed; other
// objects are left as they are, and nothing is narrowed with no
// namespaces (an uninstall).
func TestNarrowBuilt(t *testing.T) {
	const manifest = `---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: hook
webhooks:
- name: v.example.com
  clientConfig: {service: {name: hook, namespace: ns}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  sideEffects: None
  admissionReviewVersions: [v1]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
`
	build := func() kube.ResourceList {
		var infos kube.ResourceList
		for _, doc := range guard.SplitManifest(manifest) {
			infos = append(infos, &resource.Info{Object: guard.ParseDoc(doc).Obj})
		}
		return infos
	}
	infos := build()
	narrowBuilt(infos, nil)
	if !reflect.DeepEqual(infos, build()) {
		t.Errorf("narrowed with no namespaces")
	}
	narrowBuilt(infos, []string{"ns"})
	hook := infos[0].Object.(*unstructured.Unstructured)
	if !guard.WebhooksNarrowed(hook, []string{"ns"}) || guard.WebhooksNarrowed(build()[0].Object.(*unstructured.Unstructured), []string{"ns"}) {
		t.Errorf("the built webhook configuration is not narrowed: %v", hook.Object)
	}
	if !reflect.DeepEqual(infos[1], build()[1]) {
		t.Errorf("the ConfigMap was changed: %v", infos[1].Object)
	}
	tenant := &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Spec: tenancyv1.TenantSpec{Namespaces: []string{"ns"}}}
	namespaced := func(gvk schema.GroupVersionKind) bool { return gvk.Kind == "ConfigMap" }
	p := driftObjects(manifest, "ns", tenant, map[string]string{tenancyv1.LabelTenant: "t"}, namespaced)
	if len(p.hooks) != 1 || p.hooks[0].Ref != (client.ObjectKey{Name: "hook"}) || len(p.Objs) != 1 {
		t.Errorf("drift objects %+v, hooks %+v: want the ConfigMap, and the webhook configuration as a hook", p.Objs, p.hooks)
	}
}
