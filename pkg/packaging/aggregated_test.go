package packaging

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The aggregated fixture has the shapes the corpus found refused: an
// operator beside a metrics adapter that serves an APIService, a webhook
// Service with a second (metrics) port, a binding of a role the cluster
// defines, a sample that is not a CR, a Makefile VERSION of "main" and a
// marker resource without a name. It packages, with one warning each.
func TestAggregatedFixture(t *testing.T) {
	out, res := packageTo(t, filepath.Join("testdata", "aggregated"), PackageOptions{})
	checkGolden(t, out, "aggregated")

	for _, want := range [][]string{
		{"opctl took agg-controller-manager as the manager", "carries [agg-metrics-adapter] as extra workloads"},
		{"APIService v1alpha1.metrics.agg.example.com", "apiService.enabled=false in the others"},
		{"ClusterRoleBinding agg-metrics-adapter-auth-delegator binds ClusterRole system:auth-delegator", "kept as it is"},
		{"VERSION \"main\" is a placeholder", "0.0.0-dev"},
		{"sample networking.k8s.io/v1 Ingress adapter is not a custom resource"},
	} {
		if !slices.ContainsFunc(res.Warnings, func(w string) bool { return containsAll(w, want) }) {
			t.Errorf("no warning holding %q in %q", want, res.Warnings)
		}
	}
	if slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "OLM cannot install kind APIService") }) {
		t.Error("the bundle says it cannot carry the APIService, which it declares")
	}

	chart := filepath.Join(out, "charts", "agg-operator", "templates")
	api := string(readFile(t, filepath.Join(chart, "apiservice-v1alpha1.metrics.agg.example.com.yaml")))
	if !strings.HasPrefix(api, "{{- if .Values.apiService.enabled }}") || !strings.Contains(api, "name: v1alpha1.metrics.agg.example.com") || !strings.Contains(api, "namespace: {{ .Release.Namespace }}") {
		t.Errorf("APIService template:\n%s", api)
	}
	svc := string(readFile(t, filepath.Join(chart, "service-webhook-service.yaml")))
	if !strings.Contains(svc, "port: {{ .Values.webhooks.port }}") || !strings.Contains(svc, "port: 8080") {
		t.Errorf("the webhook Service keeps its metrics port and templates the webhook's:\n%s", svc)
	}

	csv := csvText(t, out, "agg-operator")
	for _, want := range []string{"deploymentName: agg-metrics-adapter", "containerPort: 6443", "group: metrics.agg.example.com", "- kind: ConfigMap\n        name: \"\"\n        version: v1"} {
		if !strings.Contains(csv, want) {
			t.Errorf("the CSV lacks %q", want)
		}
	}
	manifests, _ := os.ReadDir(filepath.Join(out, "bundle", "agg-operator", "manifests"))
	for _, m := range manifests {
		if strings.Contains(m.Name(), "apiservice") || strings.Contains(m.Name(), "metrics-adapter_v1_service.") || strings.Contains(m.Name(), "_serviceaccount") {
			t.Errorf("bundle file %s: OLM makes it from the CSV", m.Name())
		}
	}
}
