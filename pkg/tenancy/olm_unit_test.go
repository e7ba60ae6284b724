package tenancy

import (
	"context"
	"errors"
	"strings"
	"testing"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	"opctl.dev/opctl/pkg/tenancy/internal/registryv1"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

func TestOLMCRDCheck(t *testing.T) {
	live := crdWith([]string{"v1alpha1"}, version("v1alpha1", true, "size", "mode"))
	tests := []struct {
		name string
		live *apiextensionsv1.CustomResourceDefinition
		want *apiextensionsv1.CustomResourceDefinition
		skew string
	}{
		{"new CRD", nil, live, ""},
		{"same fields", live, crdWith(nil, version("v1alpha1", true, "size", "mode")), ""},
		{"newer", live, crdWith(nil, version("v1alpha1", true, "size", "mode", "extra")), ""},
		{"older: OLM would replace the newer one", live, crdWith(nil, version("v1alpha1", true, "size")), "carries an older definition"},
		{"drops a stored version", live, crdWith(nil, version("v1beta1", true, "size", "mode")), "stops serving version v1alpha1"},
		{"drops the status subresource", withStatus(live), crdWith(nil, version("v1alpha1", true, "size", "mode", "extra")), "subresources.status removed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := olmCRDCheck("widgets.v2", tt.live, tt.want)
			var skew *guard.SkewError
			switch {
			case tt.skew == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tt.skew != "" && (!errors.As(err, &skew) || !strings.Contains(err.Error(), tt.skew)):
				t.Fatalf("error %v, want a SkewError containing %q", err, tt.skew)
			}
		})
	}
}

func TestOLMConflicts(t *testing.T) {
	group := func(ns, name string, targets, status []string, provided string) *operatorsv1.OperatorGroup {
		g := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		g.Spec.TargetNamespaces, g.Status.Namespaces = targets, status
		if provided != "" {
			g.Annotations = map[string]string{annotationProvidedAPIs: provided}
		}
		return g
	}
	b := &registryv1.Bundle{OwnedAPIs: []string{"Widget.v1.example.com"}}
	tests := []struct {
		name   string
		groups []client.Object
		reason string // "" for no conflict
	}{
		{"none", nil, ""},
		{"our own group", []client.Object{group("team-a", OperatorGroupName, []string{"team-a"}, nil, "Widget.v1.example.com")}, ""},
		{"another group in the namespace", []client.Object{group("team-a", "theirs", nil, nil, "")}, tenancyv1.ReasonTooManyOperatorGroups},
		{"a global group providing the API", []client.Object{group("ops", "global", nil, []string{""}, "Other.v1.example.com,Widget.v1.example.com")}, tenancyv1.ReasonOperatorGroupConflict},
		{"a global group, status not computed yet", []client.Object{group("ops", "global", nil, nil, "Widget.v1.example.com")}, tenancyv1.ReasonOperatorGroupConflict},
		{"a global group providing other APIs", []client.Object{group("ops", "global", nil, []string{""}, "Other.v1.example.com")}, ""},
		{"a group targeting other namespaces", []client.Object{group("ops", "other", []string{"team-b"}, []string{"team-b"}, "Widget.v1.example.com")}, ""},
		{"a group targeting the tenant's namespace", []client.Object{group("ops", "other", []string{"team-a"}, []string{"team-a"}, "Widget.v1.example.com")}, tenancyv1.ReasonOperatorGroupConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(tt.groups...).Build()
			c := &olmBackend{client: cl, reader: cl, owned: ownedReader{cache: cl, live: cl}, served: true}
			tn := &tenancyv1.Tenant{Spec: tenancyv1.TenantSpec{Namespaces: []string{"team-a"}}}
			err := c.olmConflicts(context.Background(), tn, b)
			switch {
			case tt.reason == "" && err != nil:
				t.Fatalf("unexpected conflict %v", err)
			case tt.reason != "" && (err == nil || err.reason != tt.reason):
				t.Fatalf("conflict %v, want reason %s", err, tt.reason)
			}
		})
	}
}

// TestPlanOf: only the InstallPlan that OLM names in the controller's
// Subscription's status, and that the Subscription owns, is approved; a
// plan the tenant made, even one claiming the Subscription as its owner
// or named like OLM's, is not.
func TestPlanOf(t *testing.T) {
	sub := &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: "kv", UID: "sub-uid"},
		Status: operatorsv1alpha1.SubscriptionStatus{InstallPlanRef: &corev1.ObjectReference{Name: "install-abc", UID: "plan-uid"}}}
	owned := []metav1.OwnerReference{{Kind: operatorsv1alpha1.SubscriptionKind, Name: "kv", UID: "sub-uid"}}
	plan := func(name, uid string, owners []metav1.OwnerReference) *operatorsv1alpha1.InstallPlan {
		return &operatorsv1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid), OwnerReferences: owners}}
	}
	for _, tc := range []struct {
		name string
		sub  *operatorsv1alpha1.Subscription
		plan *operatorsv1alpha1.InstallPlan
		want bool
	}{
		{"OLM's plan", sub, plan("install-abc", "plan-uid", owned), true},
		{"the tenant's plan claiming the Subscription", sub, plan("install-xyz", "other-uid", owned), false},
		{"recreated under OLM's name", sub, plan("install-abc", "other-uid", owned), false},
		{"not owned", sub, plan("install-abc", "plan-uid", nil), false},
		{"no plan named yet", &operatorsv1alpha1.Subscription{ObjectMeta: sub.ObjectMeta}, plan("install-abc", "plan-uid", owned), false},
		{"no Subscription", nil, plan("install-abc", "plan-uid", owned), false},
	} {
		if got := planOf(tc.sub, tc.plan); got != tc.want {
			t.Errorf("%s: planOf %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The red team's: ConversionWebhook and GroupsReserved ran on the
// plan's target bundle only (Repair), but OLM applies the CRDs of every
// CSV of an InstallPlan. Every bundle of the plan goes through them now,
// and through the refusal of a CRD carrying the controller's own labels
// or annotations, before any CRD is applied.
func TestGuardBundlesChecksEveryBundle(t *testing.T) {
	target := &registryv1.Bundle{CSVName: "kv.v1", Analysis: &quota.Analysis{CRDs: []*apiextensionsv1.CustomResourceDefinition{
		crdWith([]string{"v1alpha1"}, version("v1alpha1", true, "size"))}}}
	target.Analysis.CRDs[0].Spec.Group = "example.com"
	other := func(edit func(*apiextensionsv1.CustomResourceDefinition)) *registryv1.Bundle {
		crd := crdWith(nil, version("v1", true, "size"))
		crd.Name, crd.Spec.Group, crd.Spec.Names.Plural = "gadgets.other.example.com", "other.example.com", "gadgets"
		edit(crd)
		return &registryv1.Bundle{CSVName: "other.v1", Analysis: &quota.Analysis{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}}}
	}
	tests := []struct {
		name   string
		bundle *registryv1.Bundle
		reason string
		what   string
	}{
		{"a CRD in a reserved group", other(func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Name, crd.Spec.Group = "gadgets.apps.k8s.io", "apps.k8s.io"
		}), tenancyv1.ReasonCRDGroupReserved, "CRD gadgets.apps.k8s.io is in API group apps.k8s.io"},
		{"a CRD converting through a webhook", other(func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter}
		}), tenancyv1.ReasonConversionWebhook, "other.v1: CRD gadgets.other.example.com converts through a webhook"},
		{"a CRD carrying the controller's annotation", other(func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Annotations = map[string]string{"tenancy.opctl.dev/crd-hash": "planted"}
		}), tenancyv1.ReasonCRDMetadataReserved, "CRD gadgets.other.example.com carries annotation tenancy.opctl.dev/crd-hash"},
		{"a CRD carrying the controller's shard label", other(func(crd *apiextensionsv1.CustomResourceDefinition) {
			crd.Labels = map[string]string{"sharding.opctl.dev/ring": "x"}
		}), tenancyv1.ReasonCRDMetadataReserved, "carries label sharding.opctl.dev/ring"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			created := 0
			cl := fake.NewClientBuilder().WithScheme(Scheme()).WithInterceptorFuncs(interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					created++
					return c.Create(ctx, obj, opts...)
				},
			}).Build()
			c := &olmBackend{client: cl, reader: cl, owned: ownedReader{cache: cl, live: cl}, served: true}
			s := &plan{tenant: &tenancyv1.Tenant{Spec: tenancyv1.TenantSpec{Namespaces: []string{"team-a"}}}}
			// The target first: its CRDs are fine, and are not applied either.
			_, err := c.guardBundles(context.Background(), s, []*registryv1.Bundle{target, tc.bundle})
			var re *operatorkit.ReasonError
			if !errors.As(err, &re) || re.Reason != tc.reason || !strings.Contains(err.Error(), tc.what) {
				t.Fatalf("guardBundles: %v, want reason %s naming %q", err, tc.reason, tc.what)
			}
			if created != 0 {
				t.Errorf("created %d CRDs before the refusal, want none", created)
			}
		})
	}
	// Both fine: applied.
	cl := fake.NewClientBuilder().WithScheme(Scheme()).Build()
	c := &olmBackend{client: cl, reader: cl, owned: ownedReader{cache: cl, live: cl}, served: true}
	s := &plan{tenant: &tenancyv1.Tenant{Spec: tenancyv1.TenantSpec{Namespaces: []string{"team-a"}}}}
	if crds, err := c.guardBundles(context.Background(), s, []*registryv1.Bundle{target, other(func(*apiextensionsv1.CustomResourceDefinition) {})}); err != nil || len(crds) != 2 {
		t.Fatalf("guardBundles of two fine bundles: %d CRDs, %v", len(crds), err)
	}
}

// TestOLMGrants: OLM grants a CSV's clusterPermissions cluster-wide, so
// every rule, namespaced ones included, must be one the platform allows.
func TestOLMGrants(t *testing.T) {
	reader := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "storage-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get"}}}}).Build()
	c := &olmBackend{reader: reader}
	s := &plan{tenant: &tenancyv1.Tenant{Spec: tenancyv1.TenantSpec{Namespaces: []string{"team-a"}}}, settings: settings{ClusterRoles: []string{"storage-reader"}}}
	storage := rbacv1.PolicyRule{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get"}}
	secrets := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}
	if err := c.olmGrants(context.Background(), s, &registryv1.Bundle{CSVName: "kv.v1", Analysis: &quota.Analysis{}, ClusterPermissions: []rbacv1.PolicyRule{storage}}); err != nil {
		t.Errorf("allowed clusterPermissions: %v", err)
	}
	var ge *guard.GrantError
	err := c.olmGrants(context.Background(), s, &registryv1.Bundle{CSVName: "kv.v1", Analysis: &quota.Analysis{}, ClusterPermissions: []rbacv1.PolicyRule{storage, secrets}})
	if !errors.As(err, &ge) || !strings.Contains(err.Error(), "list secrets") {
		t.Errorf("Secrets asked cluster-wide: %v, want a GrantError naming list secrets", err)
	}
}

// TestOLMCatalogOutsideTenants: a catalog whose registry pod OLM would
// run in a tenant namespace (an image, or a CatalogSource there) is
// refused: the tenant would control the bundles the controller reads.
func TestOLMCatalogOutsideTenants(t *testing.T) {
	tenantNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{tenancyv1.LabelTenant: "team-a"}}}
	inTenant := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: "team-a"}, Spec: operatorsv1alpha1.CatalogSourceSpec{Image: "example.com/catalog:1"}}
	reader := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(tenantNS, inTenant).Build()
	c := &olmBackend{reader: reader, served: true}
	tn := &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}, Spec: tenancyv1.TenantSpec{Namespaces: []string{"team-a"}}}
	for name, cat := range map[string]tenancyv1.OLMCatalog{
		"image":                          {Image: "example.com/catalog:1"},
		"a CatalogSource in the tenant":  {Name: "mine"},
		"a CatalogSource in it, by name": {Name: "mine", Namespace: "team-a"},
	} {
		op := tenancyv1.OperatorSpec{Name: "kv", OLM: &tenancyv1.OLMSource{Catalog: cat, Package: "p", Channel: "stable"}}
		if _, err := c.planOLM(context.Background(), tn, op); !operatorkit.IsTerminal(err) || !strings.Contains(err.Error(), "tenant") {
			t.Errorf("%s: %v, want a Terminal refusal", name, err)
		}
	}
}

// The controller approves exactly the plan it checked: a stored plan
// with a step more, a step changed or other CSVs is refused.
func TestSamePlan(t *testing.T) {
	step := func(name string) *operatorsv1alpha1.Step {
		return &operatorsv1alpha1.Step{Resolving: "op.v1", Status: operatorsv1alpha1.StepStatusPresent,
			Resource: operatorsv1alpha1.StepResource{Kind: "CustomResourceDefinition", Name: name, Manifest: `{"kind":"CustomResourceDefinition"}`}}
	}
	plan := func(csvs []string, steps ...*operatorsv1alpha1.Step) *operatorsv1alpha1.InstallPlan {
		return &operatorsv1alpha1.InstallPlan{Spec: operatorsv1alpha1.InstallPlanSpec{ClusterServiceVersionNames: csvs}, Status: operatorsv1alpha1.InstallPlanStatus{Plan: steps}}
	}
	sent := plan([]string{"op.v1"}, step("a.example.com"))
	changed := step("a.example.com")
	changed.Resource.Manifest = `{"kind":"CustomResourceDefinition","spec":{"conversion":{"strategy":"Webhook"}}}`
	for _, tc := range []struct {
		name   string
		stored *operatorsv1alpha1.InstallPlan
		ok     bool
	}{
		{"as sent", plan([]string{"op.v1"}, step("a.example.com")), true},
		{"a step added", plan([]string{"op.v1"}, step("a.example.com"), step("evil.example.com")), false},
		{"a step changed", plan([]string{"op.v1"}, changed), false},
		{"other CSVs", plan([]string{"op.v2"}, step("a.example.com")), false},
	} {
		err := samePlan(sent, tc.stored)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", tc.name, err, tc.ok)
		}
		var re *operatorkit.ReasonError
		if err != nil && (!errors.As(err, &re) || re.Reason != tenancyv1.ReasonPlanChanged) {
			t.Errorf("%s: %v, want reason %s", tc.name, err, tenancyv1.ReasonPlanChanged)
		}
	}
}

// withStatus is crd with the status subresource on every version.
func withStatus(crd *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.CustomResourceDefinition {
	crd = crd.DeepCopy()
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
	}
	return crd
}
