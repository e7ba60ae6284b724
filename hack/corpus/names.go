package main

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

// maxNameLen are kinds whose names feed a longer name or a label: a
// StatefulSet's pods carry controller-revision-hash (name, '-', 10
// characters) and a CronJob's Jobs take an 11-character suffix.
var maxNameLen = map[string]int{"StatefulSet": 52, "CronJob": 52}

// rbacKinds take any path segment as a name.
var rbacKinds = map[string]bool{"Role": true, "ClusterRole": true, "RoleBinding": true, "ClusterRoleBinding": true}

// checkNames lists every name and label of the rendered objects that does
// not fit the limit Kubernetes puts on it.
func checkNames(objs []*unstructured.Unstructured) []string {
	var bad []string
	add := func(o *unstructured.Unstructured, what string, errs []string) {
		if len(errs) > 0 {
			bad = append(bad, fmt.Sprintf("%s %s: %s: %s", o.GetKind(), o.GetName(), what, strings.Join(errs, "; ")))
		}
	}
	for _, o := range objs {
		name, kind := o.GetName(), o.GetKind()
		switch {
		case kind == "Service":
			add(o, "name", validation.IsDNS1035Label(name))
		case kind == "Namespace":
			add(o, "name", validation.IsDNS1123Label(name))
		case rbacKinds[kind]:
			if len(name) > validation.DNS1123SubdomainMaxLength {
				add(o, "name", []string{"longer than 253 characters"})
			}
		default:
			add(o, "name", validation.IsDNS1123Subdomain(name))
		}
		if n, ok := maxNameLen[kind]; ok && len(name) > n {
			add(o, "name", []string{fmt.Sprintf("%d characters, over the %d a %s's children allow", len(name), n, kind)})
		}
		for _, path := range [][]string{{"metadata", "labels"}, {"spec", "selector", "matchLabels"}, {"spec", "template", "metadata", "labels"}} {
			labels, _, _ := unstructured.NestedStringMap(o.Object, path...)
			for k, v := range labels {
				add(o, strings.Join(path, ".")+"."+k, append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...))
			}
		}
	}
	return bad
}
