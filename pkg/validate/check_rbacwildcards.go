package validate

import (
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// RBACWildcards (OPC-C007) refuses wildcard verbs, resources and API groups.
var RBACWildcards = register(Check{ID: "OPC-C007", Severity: SeverityError, Relayed: false,
	Rationale: "RBAC rules must not use wildcard verbs, resources or API groups: least privilege.",
	Hint:      "List the verbs and resources the operator needs."}, eachRender(checkRBACWildcards))

func checkRBACWildcards(c *Check, r *Report, rd *chartRender) {
	for _, o := range rd.objs {
		if k := o.obj.GetKind(); k != "Role" && k != "ClusterRole" {
			continue
		}
		var role rbacv1.ClusterRole
		if runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, &role) != nil {
			continue
		}
		for _, rule := range role.Rules {
			if slices.Contains(rule.Verbs, "*") || slices.Contains(rule.Resources, "*") || slices.Contains(rule.APIGroups, "*") {
				r.add(c, fmt.Sprintf("rule %v on %v/%v uses a wildcard", rule.Verbs, rule.APIGroups, rule.Resources), o.template, o.obj.GetKind()+"/"+o.obj.GetName())
			}
		}
	}
}
