package guard

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// localize makes each ClusterRole of a rendered release that no
// ClusterRoleBinding of the release binds a Role of the same rules in the
// tenant's namespaces: in those whose RoleBindings of the release bind it
// (which then bind the Role, under their name and localSuffix), or in all of them when none does (a
// project's editor and viewer roles, which the owners may then bind). A
// RoleBinding of a ClusterRole grants only in its namespace, so nothing is
// lost but the rules on non-resource URLs, which a Role cannot hold. The
// tenant's actor writes Roles with the tenant's rights; a ClusterRole the
// controller writes with its own, which hold only what a
// ClusterRoleBinding of the release may grant (grants.go). An aggregating
// ClusterRole is left for the grant policy to refuse.
func localize(docs []ManifestDoc, namespaces []string) []ManifestDoc {
	bound := map[string]bool{}      // by a ClusterRoleBinding
	usedIn := map[string][]string{} // namespaces of the RoleBindings of each ClusterRole
	for _, d := range docs {
		if d.Obj == nil || d.Obj.GroupVersionKind().Group != rbacv1.GroupName {
			continue
		}
		kind, _, _ := unstructured.NestedString(d.Obj.Object, "roleRef", "kind")
		ref, _, _ := unstructured.NestedString(d.Obj.Object, "roleRef", "name")
		if kind != "ClusterRole" {
			continue
		}
		switch d.Obj.GetKind() {
		case "ClusterRoleBinding":
			bound[ref] = true
		case "RoleBinding":
			if ns := d.Obj.GetNamespace(); !slices.Contains(usedIn[ref], ns) {
				usedIn[ref] = append(usedIn[ref], ns)
			}
		}
	}
	local := map[string]bool{}
	out := make([]ManifestDoc, 0, len(docs))
	for _, d := range docs {
		if !isKind(d, "ClusterRole") || bound[d.Obj.GetName()] {
			out = append(out, d)
			continue
		}
		if _, aggregating, _ := unstructured.NestedFieldNoCopy(d.Obj.Object, "aggregationRule"); aggregating {
			out = append(out, d)
			continue
		}
		in := usedIn[d.Obj.GetName()]
		if len(in) == 0 {
			in = namespaces
		}
		local[d.Obj.GetName()] = true
		for _, ns := range in {
			role := d.Obj.DeepCopy()
			role.SetKind("Role")
			role.SetNamespace(ns)
			rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
			kept := rules[:0]
			for _, r := range rules {
				if m, ok := r.(map[string]any); ok {
					if urls, _, _ := unstructured.NestedStringSlice(m, "nonResourceURLs"); len(urls) > 0 {
						continue
					}
				}
				kept = append(kept, r)
			}
			_ = unstructured.SetNestedSlice(role.Object, kept, "rules")
			out = append(out, ManifestDoc{comments: d.comments, Obj: role})
		}
	}
	for _, d := range out {
		if !isKind(d, "RoleBinding") {
			continue
		}
		kind, _, _ := unstructured.NestedString(d.Obj.Object, "roleRef", "kind")
		ref, _, _ := unstructured.NestedString(d.Obj.Object, "roleRef", "name")
		if kind == "ClusterRole" && local[ref] {
			// roleRef cannot change: a revision installed before bound
			// the ClusterRole under the binding's name, so the binding of
			// the Role takes another, and Helm replaces the old one.
			_ = unstructured.SetNestedField(d.Obj.Object, "Role", "roleRef", "kind")
			d.Obj.SetName(d.Obj.GetName() + localSuffix)
		}
	}
	return out
}

// localSuffix ends the name of a RoleBinding that localize points at a
// Role.
const localSuffix = ".local"

// isKind reports whether d is an RBAC object of kind.
func isKind(d ManifestDoc, kind string) bool {
	return d.Obj != nil && d.Obj.GroupVersionKind().Group == rbacv1.GroupName && d.Obj.GetKind() == kind
}
