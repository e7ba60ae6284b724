package registryv1

import (
	"fmt"
	"slices"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The CSV's permissions become a Role and a RoleBinding in each tenant
// namespace. Its clusterPermissions are split: the rules on namespaced
// resources join them (OLM would grant those in every namespace; the
// tenant's operator gets them in the tenant's namespaces only), and only
// the rest (cluster-scoped or unknown resources, wildcards, non-resource
// URLs) becomes a ClusterRole and ClusterRoleBinding, which the release's
// grant policy (grants.go) then allows or refuses.

// rbacObjects renders the CSV's permissions and clusterPermissions.
func (r *bundleRenderer) rbacObjects(install operatorsv1alpha1.StrategyDetailsDeployment, crds []*unstructured.Unstructured) []*unstructured.Unstructured {
	var objs []*unstructured.Unstructured
	roles := func(name, account string, rules []rbacv1.PolicyRule) {
		for _, ns := range r.in.Namespaces {
			objs = append(objs, r.typed(&rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: rules}))
			objs = append(objs, r.typed(&rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: account, Namespace: r.ns}}}))
		}
	}
	for i, p := range install.Permissions {
		roles(fmt.Sprintf("%s-%s-%d", r.in.Release, p.ServiceAccountName, i), p.ServiceAccountName, p.Rules)
	}
	cluster := clusterResources(crds, r.in.ClusterResource)
	for i, p := range install.ClusterPermissions {
		namespaced, clusterWide := splitRules(p.Rules, cluster)
		if len(namespaced) > 0 {
			roles(fmt.Sprintf("%s-%s-cluster-%d", r.in.Release, p.ServiceAccountName, i), p.ServiceAccountName, namespaced)
		}
		if len(clusterWide) == 0 {
			continue
		}
		name := r.clusterName(fmt.Sprintf("%s-%d", p.ServiceAccountName, i))
		objs = append(objs, r.typed(&rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: clusterWide}))
		objs = append(objs, r.typed(&rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: p.ServiceAccountName, Namespace: r.ns}}}))
	}
	return objs
}

// clusterResources reports whether group/resource is cluster-scoped, or
// unknown: the bundle's own CRDs first, then the cluster (lookup).
func clusterResources(crds []*unstructured.Unstructured, lookup func(group, resource string) bool) func(group, resource string) bool {
	own := map[string]bool{}
	for _, c := range crds {
		group, _, _ := unstructured.NestedString(c.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(c.Object, "spec", "names", "plural")
		scope, _, _ := unstructured.NestedString(c.Object, "spec", "scope")
		own[group+"/"+plural] = scope != "Namespaced"
	}
	return func(group, resource string) bool {
		if c, ok := own[group+"/"+resource]; ok {
			return c
		}
		if lookup == nil {
			return true
		}
		return lookup(group, resource)
	}
}

// splitRules splits rules into those on namespaced resources and the
// rest. A rule naming several groups and resources is split per group;
// subresources follow their resource.
func splitRules(rules []rbacv1.PolicyRule, cluster func(group, resource string) bool) (namespaced, clusterWide []rbacv1.PolicyRule) {
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 || slices.Contains(r.APIGroups, "*") || slices.Contains(r.Resources, "*") {
			clusterWide = append(clusterWide, r)
			continue
		}
		for _, g := range r.APIGroups {
			var ns, cl []string
			for _, res := range r.Resources {
				base, _, _ := strings.Cut(res, "/")
				if cluster(g, base) {
					cl = append(cl, res)
				} else {
					ns = append(ns, res)
				}
			}
			part := func(resources []string) rbacv1.PolicyRule {
				return rbacv1.PolicyRule{APIGroups: []string{g}, Resources: resources, Verbs: r.Verbs, ResourceNames: r.ResourceNames}
			}
			if len(ns) > 0 {
				namespaced = append(namespaced, part(ns))
			}
			if len(cl) > 0 {
				clusterWide = append(clusterWide, part(cl))
			}
		}
	}
	return namespaced, clusterWide
}
