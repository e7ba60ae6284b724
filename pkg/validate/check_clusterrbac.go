package validate

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ClusterRBAC (OPC-C008) wants no cluster-wide binding with rbac.scope=namespace.
var ClusterRBAC = register(Check{ID: "OPC-C008", Severity: SeverityWarning, Relayed: false,
	Rationale: "With rbac.scope=namespace the chart should need no cluster-scoped RBAC; every ClusterRole is a grant across tenants.",
	Hint:      "Drop the cluster-scoped rule, or document why it is needed."}, eachRender(checkClusterRBAC))

func checkClusterRBAC(c *Check, r *Report, rd *chartRender) {
	if !rd.namespaceScope() {
		return
	}
	for _, o := range rd.objs {
		if o.obj.GetKind() == "ClusterRoleBinding" {
			ref, _, _ := unstructured.NestedString(o.obj.Object, "roleRef", "name")
			r.add(c, fmt.Sprintf("with rbac.scope=namespace the chart still binds ClusterRole %s cluster-wide", ref), o.template, o.obj.GetKind()+"/"+o.obj.GetName())
		}
	}
}
