package tenancy

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

// crdAdmission validates objects the way the API server does for a CRD
// version: defaulting, the OpenAPI schema and the CEL rules.
type crdAdmission struct {
	structural *structuralschema.Structural
	openAPI    validation.SchemaValidator
	cel        *cel.Validator
}

func loadAdmission(tb testing.TB, path string) *crdAdmission {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(b, &crd); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	var internal apiextensionsinternal.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		tb.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		tb.Fatal(err)
	}
	v, _, err := validation.NewSchemaValidator(&internal)
	if err != nil {
		tb.Fatal(err)
	}
	return &crdAdmission{structural: s, openAPI: v, cel: cel.NewValidator(s, true, celconfig.PerCallLimit)}
}

// admit prunes unknown fields from obj and defaults it in place, as the API
// server does, and returns what it would refuse.
func (a *crdAdmission) admit(obj map[string]any) field.ErrorList {
	pruning.Prune(obj, a.structural, true)
	defaulting.Default(obj, a.structural)
	errs := validation.ValidateCustomResource(nil, obj, a.openAPI)
	if len(errs) > 0 {
		return errs
	}
	celErrs, _ := a.cel.Validate(context.Background(), nil, a.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return celErrs
}

// FuzzTenantSpec feeds arbitrary Tenant specs through the CRD's own
// admission (OpenAPI schema and CEL rules). What the API server would
// admit must decode into the Go type, and the namespace objects built from
// it must be valid names that stay inside the tenant's own namespaces,
// labelled for the tenant.
func FuzzTenantSpec(f *testing.F) {
	adm := loadAdmission(f, "../../config/crd/bases/tenancy.opctl.dev_tenants.yaml")
	for _, s := range []string{
		`{"namespaces":["a"]}`,
		`{"namespaces":["a","b"],"owners":[{"kind":"User","name":"alice","apiGroup":"rbac.authorization.k8s.io"}],"isolation":{"ingressNamespaces":["ingress"],"lockNetworkPolicies":true}}`,
		`{"namespaces":["a"],"operators":[{"name":"kv","chart":{"oci":"oci://r/c","version":"0.1.0"}}]}`,
		`{"namespaces":["a"],"operators":[{"name":"kv","chart":{"oci":"oci://r/c"},"olm":{"package":"p"}}]}`,
		`{"namespaces":["kube-system"],"quota":{"hard":{"pods":"-1"}}}`,
		`{"namespaces":[],"deletionPolicy":"Explode"}`,
		`{"namespaces":["a"],"operators":[{"name":"kv","chart":{"oci":"oci://r/c"},"values":{"rbac":"cluster","crds":{"install":true},"watchNamespaces":["kube-system"]}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var spec map[string]any
		if err := yaml.Unmarshal(data, &spec); err != nil || spec == nil {
			return
		}
		obj := map[string]any{"apiVersion": tenancyv1.GroupVersion.String(), "kind": "Tenant",
			"metadata": map[string]any{"name": "t1"}, "spec": spec}
		if errs := adm.admit(obj); len(errs) > 0 {
			return
		}
		j, err := json.Marshal(obj)
		if err != nil {
			t.Fatalf("admitted object does not marshal: %v", err)
		}
		var tn tenancyv1.Tenant
		if err := json.Unmarshal(j, &tn); err != nil {
			t.Fatalf("admitted spec does not decode into Tenant: %v\n%s", err, j)
		}
		s := effectiveSettings(&tn, nil)
		for _, ns := range tn.Spec.Namespaces {
			if errs := k8svalidation.IsDNS1123Label(ns); len(errs) > 0 {
				t.Fatalf("admitted namespace %q is not a DNS-1123 label: %v", ns, errs)
			}
			for _, o := range namespaceObjects(&tn, ns, s, quota.Compute(quota.Input{HeadroomPercent: s.HeadroomPercent})) {
				checkTenantObject(t, &tn, ns, o)
			}
		}
		for _, op := range tn.Spec.Operators {
			if errs := k8svalidation.IsDNS1123Label(op.Name); len(errs) > 0 || len(op.Name) > 53 {
				t.Fatalf("admitted operator name %q is not a valid Helm release name: %v", op.Name, errs)
			}
			vals, err := releaseValues(op, tn.Spec.Namespaces)
			if err != nil {
				continue
			}
			checkForcedValues(t, vals, tn.Spec.Namespaces)
		}
	})
}

// checkTenantObject fails unless o is ns (one of the tenant's namespaces)
// itself or lives in it, carries the tenant label and has a valid name.
func checkTenantObject(t *testing.T, tn *tenancyv1.Tenant, ns string, o client.Object) {
	t.Helper()
	if o.GetNamespace() != ns && !(o.GetNamespace() == "" && o.GetName() == ns) {
		t.Fatalf("%T %s/%s is outside tenant namespace %s", o, o.GetNamespace(), o.GetName(), ns)
	}
	if o.GetLabels()[tenancyv1.LabelTenant] != tn.Name {
		t.Fatalf("%T %s has no tenant label", o, o.GetName())
	}
	if errs := k8svalidation.IsDNS1123Subdomain(o.GetName()); len(errs) > 0 {
		t.Fatalf("%T name %q: %v", o, o.GetName(), errs)
	}
}

// checkForcedValues fails when a tenant's values override what the
// controller decides: namespace RBAC, the watched namespaces, no CRDs.
func checkForcedValues(t *testing.T, vals map[string]any, namespaces []string) {
	t.Helper()
	rbac, _ := vals["rbac"].(map[string]any)
	crds, _ := vals["crds"].(map[string]any)
	watch, _ := vals["watchNamespaces"].([]any)
	got := make([]string, len(watch))
	for i, w := range watch {
		got[i], _ = w.(string)
	}
	if rbac["scope"] != "namespace" || crds["install"] != false || !slices.Equal(got, namespaces) {
		t.Fatalf("tenant values override the controller's: rbac=%v crds=%v watchNamespaces=%v", vals["rbac"], vals["crds"], vals["watchNamespaces"])
	}
}
