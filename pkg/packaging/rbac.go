package packaging

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Grant is what one ServiceAccount of the project is granted, split into
// rules that can be granted per namespace and rules that cannot.
type Grant struct {
	// ServiceAccount is the account's name in the overlay.
	ServiceAccount string
	// Namespaced rules, of ClusterRoleBindings, can be granted by a Role in
	// each watched namespace.
	Namespaced []rbacv1.PolicyRule
	// Permissions are all the rules granted in a namespace: Namespaced and
	// those of RoleBindings, which grant in their own namespace only (the
	// chart keeps those Roles and RoleBindings as they are), in the order
	// of the bindings: the CSV's permissions.
	Permissions []rbacv1.PolicyRule
	// Cluster rules need a ClusterRole: cluster-scoped resources,
	// non-resource URLs and wildcards.
	Cluster []rbacv1.PolicyRule
	// Roles and ClusterRoles that make up the grant, by overlay name.
	Roles, ClusterRoles []string
}

// scopes says which resources the project's CRDs make cluster-scoped.
func scopes(crds []*apiextensionsv1.CustomResourceDefinition) map[string]bool {
	out := map[string]bool{}
	for k, v := range clusterScoped {
		out[k] = v
	}
	for _, c := range crds {
		out[c.Spec.Group+"/"+c.Spec.Names.Plural] = c.Spec.Scope == apiextensionsv1.ClusterScoped
	}
	return out
}

// namespaceable reports whether a rule's group/resource can be granted in
// one namespace.
func namespaceable(group, resource string, scope map[string]bool) bool {
	if group == "*" || resource == "*" || strings.HasPrefix(resource, "*/") {
		return false
	}
	base, _, _ := strings.Cut(resource, "/")
	return !scope[group+"/"+base]
}

// splitRule splits r into the part that can be namespaced and the rest.
func splitRule(r rbacv1.PolicyRule, scope map[string]bool) (ns, cluster []rbacv1.PolicyRule) {
	if len(r.NonResourceURLs) > 0 {
		return nil, []rbacv1.PolicyRule{r}
	}
	for _, g := range r.APIGroups {
		var nsRes, clRes []string
		for _, res := range r.Resources {
			if namespaceable(g, res, scope) {
				nsRes = append(nsRes, res)
			} else {
				clRes = append(clRes, res)
			}
		}
		if len(nsRes) > 0 {
			ns = append(ns, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: nsRes, ResourceNames: r.ResourceNames, Verbs: r.Verbs})
		}
		if len(clRes) > 0 {
			cluster = append(cluster, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: clRes, ResourceNames: r.ResourceNames, Verbs: r.Verbs})
		}
	}
	return ns, cluster
}

// Grants resolves the project's bindings into a Grant per ServiceAccount,
// sorted by account name. Roles and ClusterRoles bound to no ServiceAccount
// of the project (aggregated user roles, say) are not part of any Grant.
func (p *Project) Grants() ([]Grant, error) {
	g, _, err := p.grants()
	return g, err
}

// grants is Grants with warnings: a binding of a role the overlay does not
// define (a platform's own ClusterRole, say) is kept as it is, and the
// rules it grants are not known to the package.
func (p *Project) grants() ([]Grant, []string, error) {
	var warnings []string
	scope := scopes(p.CRDs)
	roles := map[string][]rbacv1.PolicyRule{}
	for _, o := range p.Objects {
		switch o.GetKind() {
		case "Role", "ClusterRole":
			var r rbacv1.ClusterRole
			if err := fromUnstructured(o, &r); err != nil {
				return nil, nil, err
			}
			roles[o.GetKind()+"/"+o.GetName()] = r.Rules
		}
	}
	grants := map[string]*Grant{}
	for _, o := range p.Objects {
		if o.GetKind() != "RoleBinding" && o.GetKind() != "ClusterRoleBinding" {
			continue
		}
		var b rbacv1.RoleBinding
		if err := fromUnstructured(o, &b); err != nil {
			return nil, nil, err
		}
		rules, ok := roles[b.RoleRef.Kind+"/"+b.RoleRef.Name]
		if !ok {
			warnings = append(warnings, fmt.Sprintf("%s %s binds %s %s, which the overlay does not define: the binding is kept as it is, so the role must exist where the package installs, and its rules are not in the CSV's permissions", o.GetKind(), o.GetName(), b.RoleRef.Kind, b.RoleRef.Name))
			continue
		}
		for _, s := range b.Subjects {
			if s.Kind != rbacv1.ServiceAccountKind {
				continue
			}
			g := grants[s.Name]
			if g == nil {
				g = &Grant{ServiceAccount: s.Name}
				grants[s.Name] = g
			}
			if b.RoleRef.Kind == "ClusterRole" {
				g.ClusterRoles = append(g.ClusterRoles, b.RoleRef.Name)
			} else {
				g.Roles = append(g.Roles, b.RoleRef.Name)
			}
			for _, r := range rules {
				if o.GetKind() == "RoleBinding" {
					g.Permissions = append(g.Permissions, r) // a RoleBinding grants in its namespace only
					continue
				}
				ns, cl := splitRule(r, scope)
				g.Namespaced = append(g.Namespaced, ns...)
				g.Permissions = append(g.Permissions, ns...)
				g.Cluster = append(g.Cluster, cl...)
			}
		}
	}
	out := make([]Grant, 0, len(grants))
	for _, g := range grants {
		slices.Sort(g.Roles)
		slices.Sort(g.ClusterRoles)
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b Grant) int { return strings.Compare(a.ServiceAccount, b.ServiceAccount) })
	return out, warnings, nil
}

// ManagerGrant is the Grant of the manager Deployment's ServiceAccount.
func (p *Project) ManagerGrant(grants []Grant) Grant {
	sa := p.Manager.Spec.Template.Spec.ServiceAccountName
	for _, g := range grants {
		if g.ServiceAccount == sa {
			return g
		}
	}
	return Grant{ServiceAccount: sa}
}

// fromUnstructured decodes o into a typed object; an error names the
// object and, from encoding/json, the field (the converter names neither).
func fromUnstructured(o *unstructured.Unstructured, into any) error {
	err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into)
	if err == nil {
		return nil
	}
	if b, jerr := json.Marshal(o.Object); jerr == nil {
		if jerr = json.Unmarshal(b, into); jerr != nil {
			err = jerr
		}
	}
	return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
}
