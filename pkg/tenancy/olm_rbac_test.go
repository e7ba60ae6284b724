package tenancy

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// grantPlan writes what the OperatorGroup's ServiceAccount may not, after
// its checks: the plan's CSV and its bound cluster RBAC, marking those
// steps Present; it refuses a CSV that claims a CRD the controller did not
// check, a role that aggregates, a binding to another subject and a step
// that is a reference to an unpacked bundle.
func TestGrantPlan(t *testing.T) {
	const ns, csvName, crd = "team-a", "kv.v1", "kvstores.kv.opctl.dev"
	step := func(kind, name string, obj any) *operatorsv1alpha1.Step {
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return &operatorsv1alpha1.Step{Resolving: csvName, Status: operatorsv1alpha1.StepStatusUnknown,
			Resource: operatorsv1alpha1.StepResource{Kind: kind, Name: name, Manifest: string(b)}}
	}
	csv := func(owned ...string) *operatorsv1alpha1.Step {
		c := &operatorsv1alpha1.ClusterServiceVersion{TypeMeta: metav1.TypeMeta{Kind: "ClusterServiceVersion", APIVersion: "operators.coreos.com/v1alpha1"}, ObjectMeta: metav1.ObjectMeta{Name: csvName}}
		for _, o := range owned {
			c.Spec.CustomResourceDefinitions.Owned = append(c.Spec.CustomResourceDefinitions.Owned, operatorsv1alpha1.CRDDescription{Name: o, Version: "v1", Kind: "X"})
		}
		return step("ClusterServiceVersion", csvName, c)
	}
	storage := rbacv1.PolicyRule{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get"}}
	role := func(name string, labels map[string]string, rules ...rbacv1.PolicyRule) *operatorsv1alpha1.Step {
		return step("ClusterRole", name, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules})
	}
	binding := func(name, role string, subject rbacv1.Subject) *operatorsv1alpha1.Step {
		return step("ClusterRoleBinding", name, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}, Subjects: []rbacv1.Subject{subject}})
	}
	operatorSA := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "op", Namespace: ns}
	crdOf := func(name string, fields ...string) *apiextensionsv1.CustomResourceDefinition {
		props := map[string]apiextensionsv1.JSONSchemaProps{}
		for _, f := range fields {
			props[f] = apiextensionsv1.JSONSchemaProps{Type: "string"}
		}
		return &apiextensionsv1.CustomResourceDefinition{TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}, ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "kv.opctl.dev", Scope: apiextensionsv1.NamespaceScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}}}}}}
	}
	checked := crdOf(crd, "size")
	withWebhook := csv(crd)
	{
		c := &operatorsv1alpha1.ClusterServiceVersion{}
		if err := json.Unmarshal([]byte(withWebhook.Resource.Manifest), c); err != nil {
			t.Fatal(err)
		}
		c.Spec.WebhookDefinitions = []operatorsv1alpha1.WebhookDescription{{Type: operatorsv1alpha1.ConversionWebhook, ConversionCRDs: []string{crd}}}
		withWebhook = step("ClusterServiceVersion", csvName, c)
	}
	editor := role("kv-editor", map[string]string{"rbac.authorization.k8s.io/aggregate-to-admin": "true"},
		rbacv1.PolicyRule{APIGroups: []string{"kv.opctl.dev"}, Resources: []string{"kvstores"}, Verbs: []string{"*"}})
	tests := []struct {
		name   string
		steps  []*operatorsv1alpha1.Step
		reason string // "" for success; a GrantError is "grant", another error "error"
		exists []client.Object
	}{
		{"the sample's plan", []*operatorsv1alpha1.Step{step("CustomResourceDefinition", crd, checked), csv(crd), editor, role("kv.v1-x", nil, storage), binding("kv.v1-x", "kv.v1-x", operatorSA)}, "", nil},
		{"a CSV claiming another CRD", []*operatorsv1alpha1.Step{csv(crd, "widgets.platform.example.com")}, "grant", nil},
		{"a CSV with a conversion webhook", []*operatorsv1alpha1.Step{withWebhook}, "grant", nil},
		{"the checked CRD", []*operatorsv1alpha1.Step{step("CustomResourceDefinition", crd, checked), csv(crd)}, "", nil},
		{"a CRD the controller did not check", []*operatorsv1alpha1.Step{step("CustomResourceDefinition", "gadgets.platform.example.com", crdOf("gadgets.platform.example.com", "x")), csv(crd)}, "grant", nil},
		{"the CRD, served differently since", []*operatorsv1alpha1.Step{step("CustomResourceDefinition", crd, crdOf(crd, "other")), csv(crd)}, tenancyv1.ReasonCatalogChanged, nil},
		{"a bound role that aggregates into admin", []*operatorsv1alpha1.Step{role("agg", map[string]string{"rbac.authorization.k8s.io/aggregate-to-admin": "true"}, storage), binding("agg", "agg", operatorSA)}, "grant", nil},
		{"a bound role beyond the allow-list", []*operatorsv1alpha1.Step{role("wide", nil, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"list"}}), binding("wide", "wide", operatorSA)}, "grant", nil},
		{"a binding to a user", []*operatorsv1alpha1.Step{role("r", nil, storage), binding("r", "r", rbacv1.Subject{Kind: rbacv1.UserKind, Name: "owner"})}, "grant", nil},
		{"a binding to a role outside the plan", []*operatorsv1alpha1.Step{binding("ca", "cluster-admin", operatorSA)}, "grant", nil},
		{"a binding whose name another's ClusterRoleBinding holds", []*operatorsv1alpha1.Step{role("r", nil, storage), binding("theirs", "r", operatorSA)}, "error",
			[]client.Object{&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "theirs"}, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}}}},
		{"a reference to an unpacked bundle", []*operatorsv1alpha1.Step{{Resolving: csvName, Resource: operatorsv1alpha1.StepResource{Kind: "ClusterServiceVersion", Name: csvName,
			Manifest: `{"kind":"ConfigMap","name":"abc","namespace":"team-a","catalogSourceName":"kv-catalog","catalogSourceNamespace":"team-a"}`}}}, tenancyv1.ReasonBundleReference, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "storage-reader"}, Rules: []rbacv1.PolicyRule{storage}}).
				WithObjects(tt.exists...).Build()
			c := &olmBackend{client: cl, reader: cl, owned: ownedReader{cache: cl, live: cl}}
			s := &plan{tenant: &tenancyv1.Tenant{Spec: tenancyv1.TenantSpec{Namespaces: []string{ns}}}, settings: settings{ClusterRoles: []string{"storage-reader"}}}
			ip := &operatorsv1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Name: "install-1", Namespace: ns},
				Spec: operatorsv1alpha1.InstallPlanSpec{ClusterServiceVersionNames: []string{csvName}}, Status: operatorsv1alpha1.InstallPlanStatus{Plan: tt.steps}}
			marked, left, err := c.grantPlan(context.Background(), s, ip, []*apiextensionsv1.CustomResourceDefinition{checked})
			var ge *guard.GrantError
			var re *operatorkit.ReasonError
			switch {
			case tt.reason == "grant":
				if !errors.As(err, &ge) {
					t.Fatalf("error %v, want a GrantError", err)
				}
			case tt.reason == "error":
				if err == nil || errors.As(err, &ge) {
					t.Fatalf("error %v, want a refusal that is not a GrantError", err)
				}
			case tt.reason != "":
				if !errors.As(err, &re) || re.Reason != tt.reason {
					t.Fatalf("error %v, want reason %s", err, tt.reason)
				}
			case err != nil:
				t.Fatal(err)
			}
			var roles rbacv1.ClusterRoleList
			if err := cl.List(context.Background(), &roles, client.MatchingLabels{olmOwnerNamespaceLabel: ns}); err != nil {
				t.Fatal(err)
			}
			var csvs operatorsv1alpha1.ClusterServiceVersionList
			if err := cl.List(context.Background(), &csvs, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			if tt.reason != "" {
				if len(roles.Items)+len(csvs.Items) > 0 || marked {
					t.Errorf("refused, yet wrote %d ClusterRoles and %d CSVs (marked %v)", len(roles.Items), len(csvs.Items), marked)
				}
				return
			}
			if !marked || len(csvs.Items) != 1 {
				t.Errorf("marked %v, CSVs %d; want the CSV written", marked, len(csvs.Items))
			}
			if sample := len(tt.steps) > 2; sample && (len(roles.Items) != 1 || roles.Items[0].Name != "kv.v1-x" || strings.Join(left, ",") != "kv-editor") {
				t.Errorf("roles %v, left out %v; want kv.v1-x written, kv-editor left out", roles.Items, left)
			}
			for _, st := range ip.Status.Plan {
				// OLM applies CRD steps whatever their status: they stay.
				if want := st.Resource.Kind != "CustomResourceDefinition"; want != (st.Status == operatorsv1alpha1.StepStatusPresent) {
					t.Errorf("step %s %s is %s", st.Resource.Kind, st.Resource.Name, st.Status)
				}
			}
		})
	}
}
