package packaging

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// clusterScopedAPIs are the built-in and well-known cluster-scoped APIs:
// group (core empty), kind and resource. Anything else is namespaced
// unless a project CRD says otherwise.
var clusterScopedAPIs = [][3]string{
	{"", "Namespace", "namespaces"}, {"", "Node", "nodes"}, {"", "PersistentVolume", "persistentvolumes"},
	{"", "ComponentStatus", "componentstatuses"},
	{"storage.k8s.io", "StorageClass", "storageclasses"}, {"storage.k8s.io", "CSIDriver", "csidrivers"},
	{"storage.k8s.io", "CSINode", "csinodes"}, {"storage.k8s.io", "VolumeAttachment", "volumeattachments"},
	{"storage.k8s.io", "VolumeAttributesClass", "volumeattributesclasses"},
	{"apiextensions.k8s.io", "CustomResourceDefinition", "customresourcedefinitions"},
	{"apiregistration.k8s.io", "APIService", "apiservices"},
	{"rbac.authorization.k8s.io", "ClusterRole", "clusterroles"},
	{"rbac.authorization.k8s.io", "ClusterRoleBinding", "clusterrolebindings"},
	{"scheduling.k8s.io", "PriorityClass", "priorityclasses"}, {"node.k8s.io", "RuntimeClass", "runtimeclasses"},
	{"admissionregistration.k8s.io", "ValidatingWebhookConfiguration", "validatingwebhookconfigurations"},
	{"admissionregistration.k8s.io", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations"},
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicy", "validatingadmissionpolicies"},
	{"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings"},
	{"admissionregistration.k8s.io", "MutatingAdmissionPolicy", "mutatingadmissionpolicies"},
	{"admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings"},
	{"authentication.k8s.io", "TokenReview", "tokenreviews"},
	{"authorization.k8s.io", "SubjectAccessReview", "subjectaccessreviews"},
	{"certificates.k8s.io", "CertificateSigningRequest", "certificatesigningrequests"},
	{"networking.k8s.io", "IngressClass", "ingressclasses"},
	{"flowcontrol.apiserver.k8s.io", "FlowSchema", "flowschemas"},
	{"flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration", "prioritylevelconfigurations"},
	{"metrics.k8s.io", "NodeMetrics", "nodes"},
	{"snapshot.storage.k8s.io", "VolumeSnapshotClass", "volumesnapshotclasses"},
	{"snapshot.storage.k8s.io", "VolumeSnapshotContent", "volumesnapshotcontents"},
	{"gateway.networking.k8s.io", "GatewayClass", "gatewayclasses"},
	{"cert-manager.io", "ClusterIssuer", "clusterissuers"},
	{"security.openshift.io", "SecurityContextConstraints", "securitycontextconstraints"},
	{"config.openshift.io", "ClusterVersion", "clusterversions"},
}

// clusterScoped and clusterScopedKinds index clusterScopedAPIs by
// "group/resource" and "group/Kind".
var clusterScoped, clusterScopedKinds = func() (byResource, byKind map[string]bool) {
	byResource, byKind = map[string]bool{}, map[string]bool{}
	for _, a := range clusterScopedAPIs {
		byKind[a[0]+"/"+a[1]] = true
		byResource[a[0]+"/"+a[2]] = true
	}
	return byResource, byKind
}()

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
	"Namespace": "a release installs into the namespace Helm gives it",
	"Node":      "nodes are the cluster's",
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
	if kind == "Namespace" && p.sharedNamespace(o.GetName()) {
		return "", nil // carried by name (sortNamespaces said so)
	}
	if why, ok := perClusterKinds[kind]; ok {
		return "", fmt.Errorf("%s %s: a chart cannot install a %s per release (%s): remove it from the overlay and ship it separately", kind, o.GetName(), kind, why)
	}
	if kind == "APIService" {
		return fmt.Sprintf("APIService %s: its name is the API version it serves, so a cluster holds one: the chart carries it behind apiService.enabled; install it with one release and set apiService.enabled=false in the others", o.GetName()), nil
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

// helperRole reports a ClusterRole the overlay binds to nobody whose rules
// only cover the project's API groups: the admin, editor and viewer roles
// kubebuilder scaffolds for users of the CRDs.
func (p *Project) helperRole(o *unstructured.Unstructured) bool {
	for _, b := range p.Objects {
		if k := b.GetKind(); k == "RoleBinding" || k == "ClusterRoleBinding" {
			if ref, _, _ := unstructured.NestedString(b.Object, "roleRef", "name"); ref == o.GetName() {
				return false
			}
		}
	}
	groups := map[string]bool{}
	for _, c := range p.CRDs {
		groups[c.Spec.Group] = true
	}
	rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		apiGroups, _, _ := unstructured.NestedStringSlice(rule, "apiGroups")
		if len(apiGroups) == 0 {
			return false
		}
		for _, g := range apiGroups {
			if !groups[g] {
				return false
			}
		}
	}
	return len(rules) > 0
}

// metricsService reports the Service in front of the manager's metrics.
func (p *Project) metricsService(o *unstructured.Unstructured) bool {
	return o.GetKind() == "Service" && strings.Contains(o.GetName(), "metrics")
}

// ClusterScopedKind reports whether group/kind is one of the built-in or
// well-known cluster-scoped APIs opctl knows (a project's own CRDs say
// their scope themselves).
func ClusterScopedKind(group, kind string) bool { return clusterScopedKinds[group+"/"+kind] }

// ClusterScopedResource reports whether group/resource is one of the
// built-in or well-known cluster-scoped APIs opctl knows.
func ClusterScopedResource(group, resource string) bool { return clusterScoped[group+"/"+resource] }
