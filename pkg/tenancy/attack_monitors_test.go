package tenancy_test

import (
	"context"
	"strings"
	"testing"

	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"opctl.dev/opctl/internal/testcluster"
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
	if err := as.Create(ctx, monitor("PrometheusRule", "plain", map[string]any{"groups": []any{map[string]any{"name": "g", "labels": map[string]any{"namespace": name, "team": "a"}, "rules": []any{
		map[string]any{"alert": "Down", "expr": "up == 0", "labels": map[string]any{"namespace": name, "severity": "warning"}}}}}})); err != nil {
		t.Fatalf("the owner creating a PrometheusRule of its namespace: %v", err)
	}
	// Relabelling that stays within the target's own labels is admitted.
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
	}{
		{"a plain target label", monitor("ServiceMonitor", "team", endpoint(map[string]any{"relabelings": []any{
			map[string]any{"sourceLabels": []any{"__meta_kubernetes_pod_label_team"}, "targetLabel": "team"},
			map[string]any{"action": "Replace", "targetLabel": "tier", "replacement": "backend"}}}))},
		{"a __tmp label", monitor("ServiceMonitor", "tmp", endpoint(map[string]any{"relabelings": []any{
			map[string]any{"sourceLabels": []any{"__meta_kubernetes_pod_label_shard"}, "targetLabel": "__tmp_x"},
			map[string]any{"action": "hashmod", "sourceLabels": []any{"__tmp_x"}, "targetLabel": "__tmp_hash", "modulus": int64(2)}}}))},
		{"dropping an unrelated label", monitor("ServiceMonitor", "drop", endpoint(map[string]any{"metricRelabelings": []any{
			map[string]any{"action": "labeldrop", "regex": "exported_.*|go_.*"},
			map[string]any{"action": "drop", "sourceLabels": []any{"__name__"}, "regex": "go_gc_.*"}}}))},
		{"keeping namespace and job", monitor("PodMonitor", "keep", map[string]any{"selector": selector, "podMetricsEndpoints": []any{map[string]any{"port": "metrics",
			"metricRelabelings": []any{map[string]any{"action": "labelkeep", "regex": "__name__|namespace|job|instance|pod|container|le|quantile"}}}}})},
		{"a Service label copied", monitor("ServiceMonitor", "copy", map[string]any{"selector": selector, "targetLabels": []any{"app.kubernetes.io/name"},
			"podTargetLabels": []any{"team"}, "endpoints": []any{map[string]any{"port": "metrics"}}})},
	} {
		if err := as.Create(ctx, tc.obj); err != nil {
			t.Errorf("%s: %v, want it admitted", tc.name, err)
		}
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		want string // in the refusal, when set: the message says what to change
	}{
		{"every namespace", monitor("ServiceMonitor", "any", map[string]any{"selector": selector, "namespaceSelector": map[string]any{"any": true}, "endpoints": []any{map[string]any{"port": "metrics"}}}), "namespaceSelector"},
		{"another namespace", monitor("PodMonitor", "other", map[string]any{"selector": selector, "namespaceSelector": map[string]any{"matchNames": []any{name, "kube-system"}}, "podMetricsEndpoints": []any{map[string]any{"port": "metrics"}}}), "namespaceSelector"},
		{"Prometheus's token", monitor("ServiceMonitor", "token", endpoint(map[string]any{"bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token"})), "bearerTokenFile"},
		{"Prometheus's key", monitor("ServiceMonitor", "key", endpoint(map[string]any{"tlsConfig": map[string]any{"keyFile": "/etc/prometheus/secrets/tls.key", "certFile": "/etc/prometheus/secrets/tls.crt"}})), "keyFile"},
		// The red team's second review: relabelling and scrape options
		// that reach other targets or forge other namespaces' series.
		{"another Service's address", monitor("ServiceMonitor", "readdress", endpoint(map[string]any{"relabelings": []any{
			map[string]any{"targetLabel": "__address__", "replacement": "kube-state-metrics.kube-system.svc:8080"}}})), "__address__"},
		{"the metadata endpoint's path", monitor("ServiceMonitor", "path", endpoint(map[string]any{"relabelings": []any{
			map[string]any{"targetLabel": "__metrics_path__", "replacement": "/latest/meta-data/"}}})), "__metrics_path__"},
		{"a forged namespace", monitor("ServiceMonitor", "forge", endpoint(map[string]any{"metricRelabelings": []any{
			map[string]any{"targetLabel": "namespace", "replacement": "kube-system"}}})), "namespace"},
		{"honorLabels", monitor("ServiceMonitor", "honor", endpoint(map[string]any{"honorLabels": true})), "honorLabels"},
		{"a proxy", monitor("ServiceMonitor", "proxy", endpoint(map[string]any{"proxyUrl": "http://evil.example:3128"})), "proxyUrl"},
		{"a platform scrape class", monitor("ServiceMonitor", "class", map[string]any{"selector": selector, "scrapeClass": "istio-mtls", "endpoints": []any{map[string]any{"port": "metrics"}}}), "scrapeClass"},
		{"node metadata", monitor("ServiceMonitor", "node", map[string]any{"selector": selector, "attachMetadata": map[string]any{"node": true}, "endpoints": []any{map[string]any{"port": "metrics"}}}), "attachMetadata"},
		{"a PodMonitor's readdress", monitor("PodMonitor", "pm", map[string]any{"selector": selector, "podMetricsEndpoints": []any{map[string]any{"port": "metrics",
			"relabelings": []any{map[string]any{"targetLabel": "__address__", "replacement": "10.0.0.1:443"}}}}}), "__address__"},
		{"an alert paging another namespace", monitor("PrometheusRule", "page", map[string]any{"groups": []any{map[string]any{"name": "g", "rules": []any{
			map[string]any{"alert": "ClusterDown", "expr": "vector(1)", "labels": map[string]any{"namespace": "kube-system", "severity": "critical"}}}}}}), "rules[].labels"},
		// kubebuilder's stock config/prometheus/monitor.yaml (go/v4):
		// refused for Prometheus's own token, as before.
		{"kubebuilder's stock monitor", monitor("ServiceMonitor", "stock", map[string]any{"selector": selector, "endpoints": []any{map[string]any{
			"path": "/metrics", "port": "https", "scheme": "https", "bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
			"tlsConfig": map[string]any{"insecureSkipVerify": true}}}}), "authorization.credentials"},
		// The red team's third review: relabelling by class, not by name.
		{"labelmap to __address__", monitor("ServiceMonitor", "labelmap", endpoint(map[string]any{"relabelings": []any{
			map[string]any{"action": "labelmap", "regex": "__meta_kubernetes_service_annotation_target", "replacement": "__address__"}}})), "labelmap"},
		{"a metric labelmap to namespace", monitor("ServiceMonitor", "nsmap", endpoint(map[string]any{"metricRelabelings": []any{
			map[string]any{"action": "LabelMap", "regex": "exported_(namespace)", "replacement": "$1"}}})), "labelmap"},
		{"a templated __address__", monitor("ServiceMonitor", "tmpl", endpoint(map[string]any{"relabelings": []any{
			map[string]any{"targetLabel": "__address_${1}_", "replacement": "kube-state-metrics.kube-system.svc:8080"}}})), "targetLabel"},
		{"a templated __param_", monitor("ServiceMonitor", "param", endpoint(map[string]any{"relabelings": []any{
			map[string]any{"targetLabel": "__para${1}m_target", "replacement": "http://169.254.169.254/"}}})), "targetLabel"},
		{"another __ label", monitor("PodMonitor", "interval", map[string]any{"selector": selector, "podMetricsEndpoints": []any{map[string]any{"port": "metrics",
			"relabelings": []any{map[string]any{"targetLabel": "__scrape_timeout__", "replacement": "1h"}}}}}), "targetLabel"},
		{"a lowercased job", monitor("ServiceMonitor", "lower", endpoint(map[string]any{"metricRelabelings": []any{
			map[string]any{"action": "lowercase", "sourceLabels": []any{"exported_job"}, "targetLabel": "job"}}})), "targetLabel"},
		{"dropping the namespace target label", monitor("ServiceMonitor", "dropns", endpoint(map[string]any{"relabelings": []any{
			map[string]any{"action": "labeldrop", "regex": "name.*"}}})), "labeldrop"},
		{"dropping every label", monitor("ServiceMonitor", "dropall", endpoint(map[string]any{"metricRelabelings": []any{
			map[string]any{"action": "labeldrop"}}})), "labeldrop"},
		{"keeping no job", monitor("PodMonitor", "keepnojob", map[string]any{"selector": selector, "podMetricsEndpoints": []any{map[string]any{"port": "metrics",
			"relabelings": []any{map[string]any{"action": "labelkeep", "regex": "__.*|namespace|instance"}}}}}), "labelkeep"},
		{"targetLabels namespace", monitor("ServiceMonitor", "tl", map[string]any{"selector": selector, "targetLabels": []any{"namespace"},
			"endpoints": []any{map[string]any{"port": "metrics"}}}), "targetLabels"},
		{"podTargetLabels job", monitor("PodMonitor", "ptl", map[string]any{"selector": selector, "podTargetLabels": []any{"job"},
			"podMetricsEndpoints": []any{map[string]any{"port": "metrics"}}}), "podTargetLabels"},
		{"a group labelled with another namespace", monitor("PrometheusRule", "grp", map[string]any{"groups": []any{map[string]any{"name": "g",
			"labels": map[string]any{"namespace": "kube-system"}, "rules": []any{map[string]any{"alert": "X", "expr": "vector(1)"}}}}}), "groups[].labels"},
		{"Prometheus's proxy", monitor("ServiceMonitor", "envproxy", endpoint(map[string]any{"proxyFromEnvironment": true})), "proxyFromEnvironment"},
		{"a token fetched anywhere", monitor("PodMonitor", "oauth", map[string]any{"selector": selector, "podMetricsEndpoints": []any{map[string]any{"port": "metrics",
			"oauth2": map[string]any{"tokenUrl": "http://169.254.169.254/latest/api/token",
				"clientId":     map[string]any{"secret": map[string]any{"name": "c", "key": "id"}},
				"clientSecret": map[string]any{"name": "c", "key": "secret"}}}}}), "oauth2"},
	} {
		err := as.Create(ctx, tc.obj)
		if err == nil || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy") {
			t.Errorf("%s: %v, want the tenant-monitors guardrail's refusal", tc.name, err)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal naming %q", tc.name, err, tc.want)
		}
	}
	// A ServiceMonitor scrapes what a Service's endpoints name: the owner
	// may not write them (a selectorless Service pointed at another
	// address), neither core Endpoints nor EndpointSlices.
	c := testcluster.Require(t, cluster)
	for _, r := range []authzv1.ResourceAttributes{
		{Namespace: name, Verb: "create", Resource: "endpoints"},
		{Namespace: name, Verb: "update", Resource: "endpoints"},
		{Namespace: name, Verb: "create", Group: "discovery.k8s.io", Resource: "endpointslices"},
		{Namespace: name, Verb: "update", Group: "discovery.k8s.io", Resource: "endpointslices"},
	} {
		if can(t, c, "owner-"+name, r) {
			t.Errorf("the owner may %s %s", r.Verb, r.Resource)
		}
	}
}
