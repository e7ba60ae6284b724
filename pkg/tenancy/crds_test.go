package tenancy

import (
	"context"
	"errors"
	"strings"
	"testing"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"opctl.dev/opctl/pkg/operatorkit"
)

func crdWith(stored []string, versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = "widgets.example.com"
	crd.Spec.Versions = versions
	crd.Status.StoredVersions = stored
	return crd
}

func version(name string, storage bool, fields ...string) apiextensionsv1.CustomResourceDefinitionVersion {
	spec := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
	for _, f := range fields {
		spec.Properties[f] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	}
	return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: true, Storage: storage,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec},
		}}}
}

func TestCompareCRD(t *testing.T) {
	live := crdWith([]string{"v1alpha1"}, version("v1alpha1", true, "size", "mode"))
	tests := []struct {
		name string
		live *apiextensionsv1.CustomResourceDefinition
		want *apiextensionsv1.CustomResourceDefinition
		do   guard.CRDDecision
		skew string // substring of a SkewError
	}{
		{"new CRD", nil, live, guard.CrdApply, ""},
		{"identical", live, crdWith(nil, version("v1alpha1", true, "size", "mode")), guard.CrdKeep, ""},
		{"adds a field", live, crdWith(nil, version("v1alpha1", true, "size", "mode", "extra")), guard.CrdApply, ""},
		{"adds a version", live, crdWith(nil, version("v1alpha1", true, "size", "mode"), version("v1beta1", false, "size", "mode")), guard.CrdApply, ""},
		{"older: a subset stays as is", live, crdWith(nil, version("v1alpha1", true, "size")), guard.CrdKeep, ""},
		{"removes a field while adding one", live, crdWith(nil, version("v1alpha1", true, "size", "extra")), 0, "removes fields from storage version v1alpha1 that tenants' objects may use: .spec.mode"},
		{"drops a stored version", live, crdWith(nil, version("v1beta1", true, "size", "mode")), 0, "stops serving version v1alpha1, which objects are still stored in"},
		{"drops a served version nothing stores", crdWith([]string{"v1beta1"}, version("v1alpha1", false, "size"), version("v1beta1", true, "size")),
			crdWith(nil, version("v1beta1", true, "size", "extra")), 0, "stops serving version v1alpha1, which other tenants' operators may still use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := guard.CompareCRD(tt.live, tt.want)
			var skew *guard.SkewError
			switch {
			case tt.skew != "":
				if !errors.As(err, &skew) || !strings.Contains(err.Error(), tt.skew) {
					t.Fatalf("error %v, want a SkewError containing %q", err, tt.skew)
				}
			case err != nil:
				t.Fatalf("unexpected error %v", err)
			case got != tt.do:
				t.Fatalf("decision %v, want %v", got, tt.do)
			}
		})
	}
}

// TestEnsureCRDsChangesOnlySharedCRDs: a CRD that exists without the
// shared-CRD label (the Tenant CRD, a platform operator's) is never
// changed for a tenant's operator: a Terminal refusal, nothing applied.
func TestEnsureCRDsChangesOnlySharedCRDs(t *testing.T) {
	live := crdWith([]string{"v1"}, version("v1", true, "size"))
	want := crdWith(nil, version("v1", true, "size", "mode"))
	applied := 0
	c := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(live).WithInterceptorFuncs(interceptor.Funcs{
		Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			applied++
			return nil
		},
	}).Build()
	names, err := guard.EnsureCRDs(context.Background(), c, nil, FieldManager, []*apiextensionsv1.CustomResourceDefinition{want}, nil)
	if !operatorkit.IsTerminal(err) || !strings.Contains(err.Error(), "was not installed by the tenancy controller") || applied != 0 || len(names) != 0 {
		t.Fatalf("changing an unlabelled CRD: applied %d %v, %v; want a Terminal refusal and nothing applied", applied, names, err)
	}
	// Labelled by the controller: applied.
	live.Labels = map[string]string{tenancyv1.LabelSharedCRD: "true"}
	c = fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(live).WithInterceptorFuncs(interceptor.Funcs{
		Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			applied++
			return nil
		},
	}).Build()
	if names, err := guard.EnsureCRDs(context.Background(), c, nil, FieldManager, []*apiextensionsv1.CustomResourceDefinition{want}, nil); err != nil || applied != 1 || len(names) != 1 {
		t.Fatalf("changing a shared CRD: applied %d %v, %v", applied, names, err)
	}
}

// TestOwnKinds: a chart makes a namespaced CRD its own (for aggregated
// helper roles) only if the controller installed it or the live CRD serves
// exactly its fields; naming someone else's CRD with a smaller schema,
// which the skew guard keeps the live one over, does not.
func TestOwnKinds(t *testing.T) {
	named := func(name string, scope apiextensionsv1.ResourceScope, labels map[string]string, fields ...string) *apiextensionsv1.CustomResourceDefinition {
		c := crdWith([]string{"v1"}, version("v1", true, fields...))
		c.Name, c.Spec.Scope, c.Labels = name, scope, labels
		return c
	}
	ns, shared := apiextensionsv1.NamespaceScoped, map[string]string{tenancyv1.LabelSharedCRD: "true"}
	reader := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(
		named("kvstores.kv.example.com", ns, shared, "size", "mode"),
		named("copies.kv.example.com", ns, nil, "size"),
		named("subscriptions.operators.coreos.com", ns, nil, "channel", "package"),
		named("tenants.tenancy.example.com", apiextensionsv1.ClusterScoped, shared, "owners"),
	).Build()
	want := []*apiextensionsv1.CustomResourceDefinition{
		named("kvstores.kv.example.com", ns, nil, "size"),
		named("copies.kv.example.com", ns, nil, "size"),
		named("subscriptions.operators.coreos.com", ns, nil),
		named("tenants.tenancy.example.com", apiextensionsv1.ClusterScoped, nil, "owners"),
		named("absent.kv.example.com", ns, nil, "size"),
	}
	got, err := guard.OwnKinds(context.Background(), reader, want)
	// An identical copy of another installer's CRD is not the operator's
	// (the red team's ServiceMonitor copy): only the shared label is.
	if err != nil || strings.Join(got, ",") != "kvstores.kv.example.com" {
		t.Errorf("own kinds %v, %v; want only the controller's", got, err)
	}
}

// The red team's: a chart CRD named after a built-in or aggregated
// resource would have made that resource the operator's own kind.
func TestShadows(t *testing.T) {
	served := func(group, version, resource string) (bool, error) {
		return group == "packages.operators.coreos.com" && resource == "packagemanifests", nil
	}
	cases := []struct {
		group, plural string
		refused       bool
	}{
		{"discovery.k8s.io", "endpointslices", true},
		{"k8s.io", "things", true},
		{"networking.x-k8s.io", "gateways", false},
		{"example.kubernetes.io", "things", true},
		{"packages.operators.coreos.com", "packagemanifests", true},
		{"kv.opctl.dev", "kvstores", false},
	}
	for _, tc := range cases {
		crd := crdWith(nil, version("v1", true, "size"))
		crd.Spec.Group, crd.Spec.Names.Plural = tc.group, tc.plural
		crd.Name = tc.plural + "." + tc.group
		err := guard.Shadows(served, crd)
		if (err != nil) != tc.refused || (err != nil && !operatorkit.IsTerminal(err)) {
			t.Errorf("%s: %v, want refused %v (terminal)", crd.Name, err, tc.refused)
		}
	}
}

// OLM replaces a CRD's labels when it installs it for a tenant's
// Subscription: its marks of a tenant namespace keep the CRD shared.
func TestIsShared(t *testing.T) {
	sub := func(ns, name, pkg, csv string, labels map[string]string) *operatorsv1alpha1.Subscription {
		return &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
			Spec: &operatorsv1alpha1.SubscriptionSpec{Package: pkg}, Status: operatorsv1alpha1.SubscriptionStatus{CurrentCSV: csv}}
	}
	reader := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{tenancyv1.LabelTenant: "a"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "adopted", Labels: map[string]string{tenancyv1.LabelTenant: "b"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "platform"}},
		sub("team-a", "sample", "sample-operator", "sample-operator.v0.1.0", map[string]string{tenancyv1.LabelTenant: "a"}),
		// OLM run in a namespace before the platform adopted it: not the
		// controller's Subscription.
		sub("adopted", "old", "old-operator", "old-operator.v1.0.0", nil),
	).Build()
	cases := []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"the controller's label", map[string]string{tenancyv1.LabelSharedCRD: "true"}, true},
		{"OLM for a tenant", map[string]string{"olm.managed": "true", "operators.coreos.com/sample-operator.team-a": ""}, true},
		{"OLM for the platform", map[string]string{"olm.managed": "true", "operators.coreos.com/sample-operator.platform": ""}, false},
		{"OLM's mark without olm.managed", map[string]string{"operators.coreos.com/sample-operator.team-a": ""}, false},
		{"a namespace that does not exist", map[string]string{"olm.managed": "true", "operators.coreos.com/x.gone": ""}, false},
		{"a package the controller did not subscribe to", map[string]string{"olm.managed": "true", "operators.coreos.com/other.team-a": ""}, false},
		{"OLM's mark from before the namespace was adopted", map[string]string{"olm.managed": "true", "operators.coreos.com/old-operator.adopted": ""}, false},
		{"none", nil, false},
	}
	for _, tc := range cases {
		got, err := guard.IsShared(context.Background(), reader, &metav1.ObjectMeta{Labels: tc.labels})
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	// OLM's own write of the CRD, before its operator labels: the
	// installed-alongside annotation names the namespace.
	for value, want := range map[string]bool{"team-a/sample-operator.v0.1.0": true, "platform/sample-operator.v0.1.0": false,
		"team-a/other.v1.0.0": false, "adopted/old-operator.v1.0.0": false} {
		m := &metav1.ObjectMeta{Labels: map[string]string{"olm.managed": "true"},
			Annotations: map[string]string{"operatorframework.io/installed-alongside-0123abcd": value}}
		if got, err := guard.IsShared(context.Background(), reader, m); err != nil || got != want {
			t.Errorf("installed alongside %s: %v, %v; want %v", value, got, err, want)
		}
	}
}
