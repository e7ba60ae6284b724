package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=servicemonitors,verbs=get;list;watch;create;patch;delete

// serviceMonitorKind is the Prometheus operator's ServiceMonitor.
var serviceMonitorKind = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}

// monitored reports whether the cluster serves the ServiceMonitor API: a
// store gets a ServiceMonitor for its exporters only where Prometheus
// operator runs. The mapper rediscovers the API when it is installed.
func (h *Handler) monitored() bool {
	if h.RESTMapper == nil {
		return false
	}
	_, err := h.RESTMapper.RESTMapping(serviceMonitorKind.GroupKind(), serviceMonitorKind.Version)
	return err == nil && !meta.IsNoMatchError(err)
}

// serviceMonitor scrapes every pod's exporter sidecar through the
// headless Service, which lists all the store's pods.
func serviceMonitor(k *kvv1.KVStore) client.Object {
	sm := &unstructured.Unstructured{}
	sm.SetGroupVersionKind(serviceMonitorKind)
	sm.SetNamespace(k.Namespace)
	sm.SetName(k.Name)
	labels := map[string]any{}
	for key, v := range commonLabels(k) {
		labels[key] = v
	}
	selector := map[string]any{}
	for key, v := range selectorLabels(k) {
		selector[key] = v
	}
	sm.Object["metadata"].(map[string]any)["labels"] = labels
	sm.Object["spec"] = map[string]any{
		"selector":  map[string]any{"matchLabels": selector},
		"endpoints": []any{map[string]any{"port": "metrics", "interval": "30s"}},
	}
	return sm
}
