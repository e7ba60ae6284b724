package testcluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// BootstrapLabel marks the ClusterRoles Kubernetes' bootstrap policy
// makes (kubernetes.io/bootstrapping=rbac-defaults).
const BootstrapLabel = "kubernetes.io/bootstrapping"

// BuiltinClusterRoleRules returns the rules of the ClusterRole name as
// Kubernetes' bootstrap policy makes it: its own rules or, for an
// aggregated role (admin, edit, view), those of the bootstrap roles its
// selectors match, each aggregated the same way, in the aggregation
// controller's order (roles by name, each rule once). What other
// installers aggregate into it (OLM's roles, a test's) is left out, so on
// a shared cluster it is still the built-in role.
func BuiltinClusterRoleRules(ctx context.Context, cs kubernetes.Interface, name string) ([]rbacv1.PolicyRule, error) {
	list, err := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{LabelSelector: BootstrapLabel + "=rbac-defaults"})
	if err != nil {
		return nil, fmt.Errorf("listing the bootstrap ClusterRoles: %w", err)
	}
	roles := map[string]*rbacv1.ClusterRole{}
	for i := range list.Items {
		roles[list.Items[i].Name] = &list.Items[i]
	}
	return aggregated(roles, name, nil)
}

// aggregated is the rules of the role name among roles, as the
// aggregation controller computes them; seen guards against a cycle.
func aggregated(roles map[string]*rbacv1.ClusterRole, name string, seen []string) ([]rbacv1.PolicyRule, error) {
	role, ok := roles[name]
	if !ok {
		return nil, fmt.Errorf("no bootstrap ClusterRole %s", name)
	}
	if role.AggregationRule == nil {
		return role.Rules, nil
	}
	if slices.Contains(seen, name) {
		return nil, fmt.Errorf("ClusterRoles aggregate in a cycle: %s", strings.Join(append(seen, name), " → "))
	}
	var matched []string
	for _, ls := range role.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			return nil, fmt.Errorf("ClusterRole %s: %w", name, err)
		}
		for n, r := range roles {
			if n != name && sel.Matches(labels.Set(r.Labels)) && !slices.Contains(matched, n) {
				matched = append(matched, n)
			}
		}
	}
	slices.Sort(matched)
	var out []rbacv1.PolicyRule
	for _, n := range matched {
		rules, err := aggregated(roles, n, append(seen, name))
		if err != nil {
			return nil, err
		}
		for _, r := range rules {
			if !slices.ContainsFunc(out, func(o rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(o, r) }) {
				out = append(out, r)
			}
		}
	}
	return out, nil
}
