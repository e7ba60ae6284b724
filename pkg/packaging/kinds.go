package packaging

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// clusterScopedKinds are the built-in and well-known cluster-scoped kinds
// by "group/Kind" (core group empty).
var clusterScopedKinds = map[string]bool{
	"/Namespace": true, "/Node": true, "/PersistentVolume": true,
	"storage.k8s.io/StorageClass": true, "storage.k8s.io/CSIDriver": true, "storage.k8s.io/VolumeAttributesClass": true,
	"apiextensions.k8s.io/CustomResourceDefinition": true, "apiregistration.k8s.io/APIService": true,
	"rbac.authorization.k8s.io/ClusterRole": true, "rbac.authorization.k8s.io/ClusterRoleBinding": true,
	"scheduling.k8s.io/PriorityClass": true, "node.k8s.io/RuntimeClass": true,
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration":   true,
	"admissionregistration.k8s.io/MutatingWebhookConfiguration":     true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicy":        true,
	"admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding": true,
	"admissionregistration.k8s.io/MutatingAdmissionPolicy":          true,
	"admissionregistration.k8s.io/MutatingAdmissionPolicyBinding":   true,
	"networking.k8s.io/IngressClass":                                true,
	"flowcontrol.apiserver.k8s.io/FlowSchema":                       true,
	"flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration":       true,
	"snapshot.storage.k8s.io/VolumeSnapshotClass":                   true,
	"gateway.networking.k8s.io/GatewayClass":                        true,
	"security.openshift.io/SecurityContextConstraints":              true,
}

// knownKinds are the kinds whose handling in a chart opctl knows; other
// cluster-scoped kinds are carried with a warning.
var knownKinds = []string{"ClusterRole", "ClusterRoleBinding", "ConfigMap", "CronJob", "DaemonSet", "Deployment",
	"HorizontalPodAutoscaler", "Ingress", "Job", "NetworkPolicy", "PersistentVolumeClaim", "PodDisruptionBudget",
	"PodMonitor", "PriorityClass", "PrometheusRule", "Role", "RoleBinding", "Secret", "Service", "ServiceAccount",
	"ServiceMonitor", "StatefulSet", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}

// workloadKinds run pods; their images and selectors are per release.
var workloadKinds = []string{"CronJob", "DaemonSet", "Deployment", "Job", "StatefulSet"}

// perClusterKinds cannot be made per release: their names mean something
// to Kubernetes, so two releases would fight over one object.
var perClusterKinds = map[string]string{
	"APIService": "its name is the API version it serves",
	"Namespace":  "a release installs into the namespace Helm gives it",
	"Node":       "nodes are the cluster's",
}

// clusterScoped reports whether o is cluster-scoped: a built-in or
// well-known kind, a project CRD of Cluster scope, or, by the universal
// convention, a kind named Cluster<Something>.
func (p *Project) clusterScoped(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	if clusterScopedKinds[gvk.Group+"/"+gvk.Kind] {
		return true
	}
	for _, c := range p.CRDs {
		if c.Spec.Group == gvk.Group && c.Spec.Names.Kind == gvk.Kind {
			return c.Spec.Scope == apiextensionsv1.ClusterScoped
		}
	}
	rest, ok := strings.CutPrefix(gvk.Kind, "Cluster")
	return ok && rest != "" && unicode.IsUpper(rune(rest[0]))
}

// checkKind refuses a kind that cannot be made per release, and warns of
// an unknown cluster-scoped kind.
func (p *Project) checkKind(o *unstructured.Unstructured) (warning string, err error) {
	kind := o.GetKind()
	if why, ok := perClusterKinds[kind]; ok {
		return "", fmt.Errorf("%s %s: a chart cannot install a %s per release (%s): remove it from the overlay and ship it separately", kind, o.GetName(), kind, why)
	}
	if !slices.Contains(knownKinds, kind) && p.clusterScoped(o) {
		return fmt.Sprintf("%s %s: cluster-scoped kind %s is carried with a name qualified by the release and its namespace; check that nothing refers to it by its old name", kind, o.GetName(), kind), nil
	}
	return "", nil
}

// templateWorkload makes an extra workload per release: its pods carry
// the release instance label, which its selector requires, and its
// container images come from .Values.relatedImages.
func (t *templater) templateWorkload(o *unstructured.Unstructured) {
	spec, _ := o.Object["spec"].(map[string]any)
	if spec == nil {
		return
	}
	if o.GetKind() == "CronJob" {
		spec, _, _ = unstructured.NestedMap(o.Object, "spec", "jobTemplate", "spec")
		defer func() { _ = unstructured.SetNestedMap(o.Object, spec, "spec", "jobTemplate", "spec") }()
	}
	if sel, ok, _ := unstructured.NestedMap(spec, "selector", "matchLabels"); ok && o.GetKind() != "Job" && o.GetKind() != "CronJob" {
		t.instance(sel)
		_ = unstructured.SetNestedMap(spec, sel, "selector", "matchLabels")
	}
	tmpl, _ := spec["template"].(map[string]any)
	if tmpl == nil {
		return
	}
	labels, _, _ := unstructured.NestedMap(tmpl, "metadata", "labels")
	if labels == nil {
		labels = map[string]any{}
	}
	t.instance(labels)
	_ = unstructured.SetNestedMap(tmpl, labels, "metadata", "labels")
	pod, _ := tmpl["spec"].(map[string]any)
	for _, key := range []string{"initContainers", "containers"} {
		cs, _ := pod[key].([]any)
		for _, c := range cs {
			m, _ := c.(map[string]any)
			if img, ok := m["image"].(string); ok && t.imageKeys[img] != "" {
				m["image"] = t.token(fmt.Sprintf(`{{ index .Values.relatedImages %q | quote }}`, t.imageKeys[img]))
			}
		}
	}
}

// instance adds the release instance to labels or a selector of an extra
// workload's pods, dropping the chart-owned keys the overlay set.
func (t *templater) instance(m map[string]any) {
	for _, k := range helmLabelKeys {
		if k != nameLabel {
			delete(m, k)
		}
	}
	m["app.kubernetes.io/instance"] = t.token("{{ .Release.Name }}")
}
