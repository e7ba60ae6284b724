package tenancy_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The shipped baseline gives a tenant's owners (and operators) the
// Prometheus operator's monitors in its namespaces; the guardrail
// tenant-monitors, with the controller stopped, keeps a monitor to its
// own namespace and refuses the fields that would have a shared
// Prometheus send its own token or keys to the tenant.
func TestTenantMonitors(t *testing.T) {
	ctx := context.Background()
	name, as := stoppedTenant(t, "monitors-")
	monitor := func(kind, n string, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "monitoring.coreos.com/v1", "kind": kind,
			"metadata": map[string]any{"name": n, "namespace": name}, "spec": spec}}
		return u
	}
	selector := map[string]any{"matchLabels": map[string]any{"app": "mine"}}
	endpoint := func(extra map[string]any) map[string]any {
		e := map[string]any{"port": "metrics"}
		for k, v := range extra {
			e[k] = v
		}
		return map[string]any{"selector": selector, "endpoints": []any{e}}
	}
	if err := as.Create(ctx, monitor("ServiceMonitor", "plain", endpoint(nil))); err != nil {
		t.Fatalf("the owner creating a ServiceMonitor of its namespace (the baseline grants it): %v", err)
	}
	if err := as.Create(ctx, monitor("PodMonitor", "plain", map[string]any{"selector": selector, "podMetricsEndpoints": []any{map[string]any{"port": "metrics"}}})); err != nil {
		t.Fatalf("the owner creating a PodMonitor of its namespace: %v", err)
	}
	if err := as.Create(ctx, monitor("PrometheusRule", "plain", map[string]any{"groups": []any{map[string]any{"name": "g", "rules": []any{
		map[string]any{"alert": "Down", "expr": "up == 0", "labels": map[string]any{"namespace": name, "severity": "warning"}}}}}})); err != nil {
		t.Fatalf("the owner creating a PrometheusRule of its namespace: %v", err)
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
	}{
		{"every namespace", monitor("ServiceMonitor", "any", map[string]any{"selector": selector, "namespaceSelector": map[string]any{"any": true}, "endpoints": []any{map[string]any{"port": "metrics"}}})},
		{"another namespace", monitor("PodMonitor", "other", map[string]any{"selector": selector, "namespaceSelector": map[string]any{"matchNames": []any{name, "kube-system"}}, "podMetricsEndpoints": []any{map[string]any{"port": "metrics"}}})},
		{"Prometheus's token", monitor("ServiceMonitor", "token", endpoint(map[string]any{"bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token"}))},
		{"Prometheus's key", monitor("ServiceMonitor", "key", endpoint(map[string]any{"tlsConfig": map[string]any{"keyFile": "/etc/prometheus/secrets/tls.key", "certFile": "/etc/prometheus/secrets/tls.crt"}}))},
		// The red team's second review: relabelling and scrape options
		// that reach other targets or forge other namespaces' series.
		{"another Service's address", monitor("ServiceMonitor", "readdress", endpoint(map[string]any{"relabelings": []any{
			map[string]any{"targetLabel": "__address__", "replacement": "kube-state-metrics.kube-system.svc:8080"}}}))},
		{"the metadata endpoint's path", monitor("ServiceMonitor", "path", endpoint(map[string]any{"relabelings": []any{
			map[string]any{"targetLabel": "__metrics_path__", "replacement": "/latest/meta-data/"}}}))},
		{"a forged namespace", monitor("ServiceMonitor", "forge", endpoint(map[string]any{"metricRelabelings": []any{
			map[string]any{"targetLabel": "namespace", "replacement": "kube-system"}}}))},
		{"honorLabels", monitor("ServiceMonitor", "honor", endpoint(map[string]any{"honorLabels": true}))},
		{"a proxy", monitor("ServiceMonitor", "proxy", endpoint(map[string]any{"proxyUrl": "http://evil.example:3128"}))},
		{"a platform scrape class", monitor("ServiceMonitor", "class", map[string]any{"selector": selector, "scrapeClass": "istio-mtls", "endpoints": []any{map[string]any{"port": "metrics"}}})},
		{"node metadata", monitor("ServiceMonitor", "node", map[string]any{"selector": selector, "attachMetadata": map[string]any{"node": true}, "endpoints": []any{map[string]any{"port": "metrics"}}})},
		{"a PodMonitor's readdress", monitor("PodMonitor", "pm", map[string]any{"selector": selector, "podMetricsEndpoints": []any{map[string]any{"port": "metrics",
			"relabelings": []any{map[string]any{"targetLabel": "__address__", "replacement": "10.0.0.1:443"}}}}})},
		{"an alert paging another namespace", monitor("PrometheusRule", "page", map[string]any{"groups": []any{map[string]any{"name": "g", "rules": []any{
			map[string]any{"alert": "ClusterDown", "expr": "vector(1)", "labels": map[string]any{"namespace": "kube-system", "severity": "critical"}}}}}})},
	} {
		if err := as.Create(ctx, tc.obj); err == nil || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy") {
			t.Errorf("%s: %v, want the tenant-monitors guardrail's refusal", tc.name, err)
		}
	}
}
