package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// sameKinds are kinds a chart may carry another's object as: rules asked
// cluster-wide become Roles under rbac.scope=namespace.
var sameKinds = map[string][]string{
	"ClusterRole":        {"ClusterRole", "Role"},
	"ClusterRoleBinding": {"ClusterRoleBinding", "RoleBinding"},
}

// hashedName is a name the chart cut to fit: its head, '-', 8 hex digits.
var hashedName = regexp.MustCompile(`^(.+)-[0-9a-f]{8}$`)

// inChart reports whether the chart's rendering carries o: the same kind
// and name, or the name with the overlay's prefix replaced by the
// release's.
func inChart(o *unstructured.Unstructured, prefix string, rendered []*unstructured.Unstructured) bool {
	kinds := sameKinds[o.GetKind()]
	if kinds == nil {
		kinds = []string{o.GetKind()}
	}
	base := strings.TrimPrefix(o.GetName(), prefix)
	for _, r := range rendered {
		if !contains(kinds, r.GetKind()) {
			continue
		}
		n := r.GetName()
		if n == o.GetName() || n == base || strings.HasSuffix(n, "-"+base) || strings.HasSuffix(n, "."+base) {
			return true
		}
		// A name over 63 characters is cut to 54 and ends in 8 hex digits
		// of its sha256 (fullnameOverride=r, namespace n).
		if m := hashedName.FindStringSubmatch(n); m != nil {
			for _, full := range []string{"r-" + base, "r-n-" + base} {
				if len(full) > 63 && len(m[1]) >= 50 && strings.HasPrefix(full, m[1]) {
					return true
				}
			}
		}
		// The webhooks' own Issuer and Certificate: the chart makes its
		// own under certManager.enabled, with its own names.
		if r.GroupVersionKind().Group == "cert-manager.io" && (strings.HasSuffix(n, "-serving-cert") || strings.HasSuffix(n, "-selfsigned-issuer")) {
			return true
		}
	}
	return false
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// named reports whether a package warning names o, so that leaving it out
// was said rather than silent.
func named(o *unstructured.Unstructured, warnings []string) bool {
	for _, w := range warnings {
		if strings.Contains(w, o.GetKind()+" "+o.GetName()) {
			return true
		}
	}
	return false
}

// bundle is a registry+v1 bundle as the corpus reads it.
type bundle struct {
	objs []*unstructured.Unstructured
	csv  *unstructured.Unstructured
}

func readBundle(dir string) (*bundle, error) {
	files, err := filepath.Glob(filepath.Join(dir, "manifests", "*.yaml"))
	if err != nil {
		return nil, err
	}
	b := &bundle{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs, err := decodeAll(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, d := range docs {
			if d.GetKind() == "ClusterServiceVersion" {
				b.csv = d
			}
			b.objs = append(b.objs, d)
		}
	}
	if b.csv == nil {
		return nil, fmt.Errorf("%s: no ClusterServiceVersion", dir)
	}
	return b, nil
}

func (b *bundle) list(path ...string) []any {
	l, _, _ := unstructured.NestedSlice(b.csv.Object, path...)
	return l
}

// csvKinds are carried by the CSV itself or made by OLM from it, the kinds
// a bundle cannot hold as files (see docs/corpus.md).
func (b *bundle) carries(o *unstructured.Unstructured, prefix string) bool {
	base := strings.TrimPrefix(o.GetName(), prefix)
	switch o.GetKind() {
	case "Namespace":
		return true // OLM installs into the OperatorGroup's namespace
	case "Deployment":
		for _, d := range b.list("spec", "install", "spec", "deployments") {
			n, _ := d.(map[string]any)["name"].(string)
			if n == o.GetName() || n == base || strings.HasSuffix(n, "-"+base) {
				return true
			}
		}
		return false
	case "ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding":
		if b.has(o) {
			return true
		}
		return len(b.list("spec", "install", "spec", "permissions"))+len(b.list("spec", "install", "spec", "clusterPermissions")) > 0
	case "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
		return len(b.list("spec", "webhookdefinitions")) > 0
	case "APIService":
		return len(b.list("spec", "apiservicedefinitions", "owned")) > 0
	case "Service":
		return b.has(o) || len(b.list("spec", "webhookdefinitions"))+len(b.list("spec", "apiservicedefinitions", "owned")) > 0
	}
	if o.GroupVersionKind().Group == "cert-manager.io" {
		return len(b.list("spec", "webhookdefinitions"))+len(b.list("spec", "apiservicedefinitions", "owned")) > 0
	}
	return b.has(o)
}

func (b *bundle) has(o *unstructured.Unstructured) bool {
	for _, x := range b.objs {
		if x.GetKind() == o.GetKind() && x.GetName() == o.GetName() {
			return true
		}
	}
	return false
}

// managerRBAC are the roles and bindings of the kustomize build that grant
// the manager's ServiceAccount: the chart merges their rules into its own
// manager RBAC (rbac-manager.yaml), under other names.
func managerRBAC(ref []*unstructured.Unstructured, manager string) map[string]bool {
	sa := "default"
	for _, o := range ref {
		if o.GetKind() == "Deployment" && o.GetName() == manager {
			if n, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "serviceAccountName"); n != "" {
				sa = n
			}
		}
	}
	out := map[string]bool{}
	for _, o := range ref {
		if o.GetKind() != "RoleBinding" && o.GetKind() != "ClusterRoleBinding" {
			continue
		}
		subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
		for _, s := range subjects {
			if m, _ := s.(map[string]any); m["kind"] == "ServiceAccount" && m["name"] == sa {
				kind, _, _ := unstructured.NestedString(o.Object, "roleRef", "kind")
				name, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
				out[o.GetKind()+" "+o.GetName()], out[kind+" "+name] = true, true
			}
		}
	}
	return out
}

// inManagerRBAC reports a role or binding merged into the chart's manager
// RBAC, when the chart has that RBAC.
func inManagerRBAC(o *unstructured.Unstructured, merged map[string]bool, rendered []*unstructured.Unstructured) bool {
	if !merged[o.GetKind()+" "+o.GetName()] {
		return false
	}
	for _, r := range rendered {
		n := r.GetName()
		if (r.GetKind() == "Role" || r.GetKind() == "ClusterRole") && (strings.HasSuffix(n, "-manager") || strings.HasSuffix(n, "-manager-cluster")) {
			return true
		}
	}
	return false
}

// dropped lists the objects of the kustomize build that the chart or the
// bundle leaves out without a warning naming them.
func dropped(ref, rendered []*unstructured.Unstructured, b *bundle, prefix string, merged map[string]bool, warnings []string) (chart, bndl []string) {
	for _, o := range ref {
		id := o.GetKind() + " " + o.GetName()
		if named(o, warnings) {
			continue
		}
		if o.GetKind() != "Namespace" && !inChart(o, prefix, rendered) && !inManagerRBAC(o, merged, rendered) {
			chart = append(chart, id)
		}
		if b != nil && !b.carries(o, prefix) {
			bndl = append(bndl, id)
		}
	}
	return chart, bndl
}
