package packaging

import (
	"fmt"
	"slices"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// APIServices are aggregated APIs (metrics adapters, say): an APIService
// names the Service of a workload that serves an API group version. Its
// name is that group version, so a cluster holds one: the chart carries it
// behind apiService.enabled for the release that owns it, and the bundle
// declares it in apiservicedefinitions, where OLM makes the APIService,
// its Service and its certificate.

// apiServices are the overlay's APIServices.
func (p *Project) apiServices() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range p.Objects {
		if o.GetKind() == "APIService" {
			out = append(out, o)
		}
	}
	return out
}

// apiServiceBackend is the Service an APIService calls, the Deployment
// that Service selects, and the container port behind it; nil when the
// APIService names no Service of the overlay (a local APIService).
func (p *Project) apiServiceBackend(a *unstructured.Unstructured) (svc, deployment *unstructured.Unstructured, port int32) {
	name, _, _ := unstructured.NestedString(a.Object, "spec", "service", "name")
	i := slices.IndexFunc(p.Objects, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Service" && o.GetName() == name })
	if i < 0 {
		return nil, nil, 0
	}
	svc = p.Objects[i]
	want := int64(443)
	if v, ok, _ := unstructured.NestedInt64(a.Object, "spec", "service", "port"); ok {
		want = v
	}
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	for _, pt := range ports {
		m, _ := pt.(map[string]any)
		if toInt(m["port"]) == want {
			port = int32(toInt(m["port"]))
			if tp, ok := m["targetPort"]; ok && toInt(tp) > 0 {
				port = int32(toInt(tp))
			}
		}
	}
	sel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
	for _, d := range append([]*unstructured.Unstructured{p.managerRaw}, p.Objects...) {
		if d == nil || d.GetKind() != "Deployment" {
			continue
		}
		labels, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
		if len(sel) > 0 && labelsMatch(sel, labels) {
			return svc, d, port
		}
	}
	return svc, nil, port
}

// apiServiceDefinitions declares the APIServices for OLM. The API's kinds
// are not in the overlay, so entries name the group and version only.
func (p *Project) apiServiceDefinitions() ([]operatorsv1alpha1.APIServiceDescription, []string) {
	var out []operatorsv1alpha1.APIServiceDescription
	var warnings []string
	for _, a := range p.apiServices() {
		group, _, _ := unstructured.NestedString(a.Object, "spec", "group")
		version, _, _ := unstructured.NestedString(a.Object, "spec", "version")
		_, d, port := p.apiServiceBackend(a)
		if d == nil || port == 0 {
			warnings = append(warnings, fmt.Sprintf("APIService %s: no Deployment of the overlay serves it on a numbered port, so the bundle does not declare it: OLM installs only APIServices its CSV's Deployments serve", a.GetName()))
			continue
		}
		out = append(out, operatorsv1alpha1.APIServiceDescription{
			Name: group, Group: group, Version: version, DeploymentName: d.GetName(), ContainerPort: port,
			DisplayName: a.GetName(), Description: fmt.Sprintf("The aggregated API %s/%s, served by %s.", group, version, d.GetName()),
		})
	}
	return out, warnings
}

// apiServiceTemplate wraps a rendered APIService in its value.
func apiServiceTemplate(text string) string {
	return "{{- if .Values.apiService.enabled }}\n" + text + "{{- end }}\n"
}

// workloadAccounts are the ServiceAccounts of the Deployments in the CSV,
// the manager's first, then the others' by Deployment name.
func (p *Project) workloadAccounts() []string {
	var out []string
	add := func(sa string) {
		if sa != "" && sa != "default" && !slices.Contains(out, sa) {
			out = append(out, sa)
		}
	}
	add(p.Manager.Spec.Template.Spec.ServiceAccountName)
	for _, o := range p.Objects {
		if o.GetKind() == "Deployment" {
			sa, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "serviceAccountName")
			add(sa)
		}
	}
	return out
}
