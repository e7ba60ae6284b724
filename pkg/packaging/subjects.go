package packaging

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// placeholderNamespace is kubebuilder's name for the operator's namespace
// in config/: kustomize's namespace replaces it on objects, but on a
// binding's subject only where the subject matched a ServiceAccount of the
// overlay as it stood (one without `namespace: system` in its file matches
// none), and the subject's name then keeps no namePrefix either.
const placeholderNamespace = "system"

// bindSubjects points the ServiceAccount subjects of the overlay's
// RoleBindings and ClusterRoleBindings that kustomize left in
// placeholderNamespace at the operator's namespace, which the chart makes
// the release namespace, and at the overlay's ServiceAccount of that name
// (with the namePrefix) where there is one. Left as they were, they would
// bind the operator's rules to an account of a namespace named "system":
// the operator would lack them, and whoever owns such a namespace would
// hold them.
func (p *Project) bindSubjects() {
	accounts := map[string]bool{}
	for _, o := range p.Objects {
		if o.GetKind() == "ServiceAccount" {
			accounts[o.GetName()] = true
		}
	}
	for _, o := range p.Objects {
		if k := o.GetKind(); (k != "RoleBinding" && k != "ClusterRoleBinding") || o.GroupVersionKind().Group != "rbac.authorization.k8s.io" {
			continue
		}
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		changed := false
		for i, s := range subjects {
			m, _ := s.(map[string]any)
			if m["kind"] != "ServiceAccount" || m["namespace"] != placeholderNamespace || p.Namespace == placeholderNamespace {
				continue
			}
			name, _ := m["name"].(string)
			if !accounts[name] && accounts[p.NamePrefix+name] {
				name = p.NamePrefix + name
			}
			what := "which the chart creates"
			if !accounts[name] {
				what = "which the overlay does not define"
			}
			p.warnf("%s %s binds ServiceAccount %s in namespace %q, which kustomize left as it was (the ServiceAccount's file names no namespace %q?): the package binds ServiceAccount %s of the operator's namespace, %s", o.GetKind(), o.GetName(), m["name"], placeholderNamespace, placeholderNamespace, name, what)
			m = map[string]any{"kind": "ServiceAccount", "name": name, "namespace": p.Namespace}
			subjects[i], changed = m, true
		}
		if changed {
			_ = unstructured.SetNestedSlice(o.Object, slices.Clip(subjects), "subjects")
		}
	}
}
