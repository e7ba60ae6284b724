package validate

import (
	"context"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/baseline"
	"opctl.dev/opctl/pkg/tenancy/policy"
)

// tenantPolicy is what a chart is judged against for a tenant beyond the
// shipped baseline.
type tenantPolicy struct {
	// platform are the ClusterRoles the platform names for tenants.
	platform []rbacv1.ClusterRole
	// owner are the rules of policy.OwnerRole as the cluster serves them,
	// and live reads the cluster's other roles; nil for both judges by
	// Kubernetes' built-in admin role (policy.BuiltinOwnerRules) and the
	// built-in roles opctl knows.
	owner []rbacv1.PolicyRule
	live  policy.RoleSource
}

// BuiltinOwnerRole says what the Roles in a tenant's namespaces are judged
// against without a cluster.
var BuiltinOwnerRole = "Kubernetes " + policy.BuiltinKubernetes + "'s built-in " + policy.OwnerRole + " role"

// offlineRoles is the RoleSource without a cluster: the built-in
// ClusterRoles a release may bind (baseline.BuiltinRoles), and no Role.
type offlineRoles struct{}

func (offlineRoles) ClusterRole(_ context.Context, name string) ([]rbacv1.PolicyRule, bool, error) {
	rules, ok := baseline.BuiltinRoles[name]
	return rules, ok, nil
}

func (offlineRoles) Role(context.Context, string, string) ([]rbacv1.PolicyRule, bool, error) {
	return nil, false, nil
}

// offlineUnknown ends the refusal of a binding of a role the release does
// not define, judged without a cluster.
const offlineUnknown = "which the release does not define and opctl cannot read without a cluster (the controller refuses it unless the cluster has it, and then judges its rules)"

// judgeNamespaced adds to r what the tenancy controller would refuse of
// the Roles and RoleBindings of rd in the tenant's namespaces
// (policy.Namespaced), and of its CRDs that convert through a webhook
// (policy.ConversionWebhook), each with the controller's reason and text.
// allowed is what the platform allows anywhere, clusterRoles those rd
// defines. An error is a failure to read the cluster.
func judgeNamespaced(ctx context.Context, c *Check, r *Report, in *chartInput, rd *chartRender, tp tenantPolicy, allowed []rbacv1.PolicyRule, clusterRoles map[string][]rbacv1.PolicyRule) error {
	prefix := against(tp.platform)
	n := policy.Namespaced{Allowed: allowed, Owner: tp.owner, ClusterRoles: clusterRoles, Live: tp.live}
	if tp.live == nil {
		n.Owner, n.Live, n.Unknown = policy.BuiltinOwnerRules, offlineRoles{}, offlineUnknown
	}
	for _, role := range tp.platform {
		n.Named = append(n.Named, role.Name)
	}
	where := map[string]rendered{} // Kind/namespace/name → its object
	crds := tenantCRDs(in, rd)
	for _, o := range rd.objs {
		switch o.obj.GetKind() {
		case "Role":
			var role rbacv1.Role
			if runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, &role) == nil {
				n.Roles = append(n.Roles, &role)
				where["Role/"+role.Namespace+"/"+role.Name] = o
			}
		case "RoleBinding":
			var b rbacv1.RoleBinding
			if runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, &b) == nil {
				n.Bindings = append(n.Bindings, &b)
				where["RoleBinding/"+b.Namespace+"/"+b.Name] = o
			}
		}
	}
	for _, crd := range crds {
		if crd.crd.Spec.Scope == apiextensionsv1.NamespaceScoped {
			n.Kinds = append(n.Kinds, crd.crd.Name)
		}
		if err := policy.ConversionWebhook([]*apiextensionsv1.CustomResourceDefinition{crd.crd}); err != nil {
			r.addReason(c, tenancyv1.ReasonConversionWebhook, prefix+err.Error(), crd.template, "CustomResourceDefinition/"+crd.crd.Name)
		}
	}
	refused, err := n.Judge(ctx)
	if err != nil {
		return err
	}
	for _, ref := range refused {
		o := where[ref.Kind+"/"+ref.Namespace+"/"+ref.Name]
		r.addReason(c, tenancyv1.ReasonClusterRightsRefused, prefix+ref.Text, o.template, ref.Kind+"/"+ref.Name)
	}
	return nil
}

// tenantCRD is a CRD the tenancy controller would share for the chart,
// and where it came from.
type tenantCRD struct {
	crd      *apiextensionsv1.CustomResourceDefinition
	template string
}

// tenantCRDs are the CRDs of rd and of the chart's crds/ directory, which
// the controller renders too.
func tenantCRDs(in *chartInput, rd *chartRender) []tenantCRD {
	var out []tenantCRD
	for _, o := range rd.objs {
		if o.obj.GetKind() != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, crd) == nil {
			out = append(out, tenantCRD{crd: crd, template: o.template})
		}
	}
	for _, f := range in.chart.CRDObjects() {
		for _, doc := range strings.Split(string(f.File.Data), "\n---") {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if yaml.Unmarshal([]byte(doc), crd) == nil && crd.Kind == "CustomResourceDefinition" {
				out = append(out, tenantCRD{crd: crd, template: f.Filename})
			}
		}
	}
	return out
}

// addReason records a finding that the tenancy controller reports with
// reason.
func (r *Report) addReason(c *Check, reason, message, file, object string) {
	r.add(c, message, file, object)
	r.Findings[len(r.Findings)-1].Reason = reason
}
