package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// sameKinds are kinds a chart may carry another's object as: rules asked
// cluster-wide become Roles under rbac.scope=namespace.
var sameKinds = map[string][]string{
	"ClusterRole":        {"ClusterRole", "Role"},
	"ClusterRoleBinding": {"ClusterRoleBinding", "RoleBinding"},
}

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
// a bundle cannot hold as files (see docs/package.md).
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

// namePrefix reads the overlay's namePrefix, which the chart replaces with
// the release's name.
func namePrefix(overlay string) string {
	for _, f := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		raw, err := os.ReadFile(filepath.Join(overlay, f))
		if err != nil {
			continue
		}
		var k struct {
			NamePrefix string `json:"namePrefix"`
		}
		if yaml.Unmarshal(raw, &k) == nil {
			return k.NamePrefix
		}
	}
	return ""
}

// dropped lists the objects of the kustomize build that the chart or the
// bundle leaves out without a warning naming them.
func dropped(ref, rendered []*unstructured.Unstructured, b *bundle, prefix string, warnings []string) (chart, bndl []string) {
	for _, o := range ref {
		id := o.GetKind() + " " + o.GetName()
		if named(o, warnings) {
			continue
		}
		if o.GetKind() != "Namespace" && !inChart(o, prefix, rendered) {
			chart = append(chart, id)
		}
		if b != nil && !b.carries(o, prefix) {
			bndl = append(bndl, id)
		}
	}
	return chart, bndl
}
