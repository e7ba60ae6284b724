package packaging

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// servedSubresources are the subresources of a custom resource that mean
// something to the API server: a CRD serves status and scale, and
// OwnerReferencesPermissionEnforcement reads finalizers.
var servedSubresources = []string{"status", "scale", "finalizers"}

// dropInertSubresources leaves out of the overlay's Roles and
// ClusterRoles each resource that names a subresource of one of the
// project's own CRDs the API server never serves (mongodb's operator
// asks for mongodbcommunity/spec), with a warning per rule: such a rule
// grants nothing, but the tenancy controller, which lets a tenant's
// operator hold its own kinds and their served subresources, would refuse
// it, and an actor would have to hold it to grant it.
func (p *Project) dropInertSubresources() {
	own := map[string]bool{}
	for _, c := range p.CRDs {
		own[c.Spec.Group+"/"+c.Spec.Names.Plural] = true
	}
	for _, o := range p.Objects {
		if k := o.GetKind(); (k != "Role" && k != "ClusterRole") || o.GroupVersionKind().Group != "rbac.authorization.k8s.io" {
			continue
		}
		rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
		changed := false
		for i, r := range rules {
			m, _ := r.(map[string]any)
			groups, _, _ := unstructured.NestedStringSlice(m, "apiGroups")
			resources, _, _ := unstructured.NestedStringSlice(m, "resources")
			var kept, dropped []string
			for _, res := range resources {
				base, sub, ok := strings.Cut(res, "/")
				if ok && !slices.Contains(servedSubresources, sub) && len(groups) > 0 && !slices.ContainsFunc(groups, func(g string) bool { return !own[g+"/"+base] }) {
					dropped = append(dropped, res)
					continue
				}
				kept = append(kept, res)
			}
			if len(dropped) == 0 {
				continue
			}
			p.warnf("%s %s: rule %d names %s %s, a subresource the API server does not serve for the project's CRD (only %s mean something): left out, as it grants nothing", o.GetKind(), o.GetName(), i+1, strings.Join(groups, ","), strings.Join(dropped, ", "), strings.Join(servedSubresources, ", "))
			if len(kept) == 0 {
				rules[i] = nil
			} else {
				m["resources"] = toAnyList(kept)
			}
			changed = true
		}
		if changed {
			rules = slices.DeleteFunc(rules, func(r any) bool { return r == nil })
			_ = unstructured.SetNestedSlice(o.Object, rules, "rules")
		}
	}
}
