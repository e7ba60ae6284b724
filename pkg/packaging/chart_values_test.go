package packaging

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// renderedObject decodes the one rendered object of kind named like name.
func renderedObject(t *testing.T, rendered map[string]string, kind, name string, into any) {
	t.Helper()
	for _, doc := range renderedDocs(t, rendered) {
		meta, _ := doc["metadata"].(map[string]any)
		if doc["kind"] == kind && strings.Contains(meta["name"].(string), name) {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(doc, into); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
}

// Every value of the pod and the manager reaches the Deployment, the
// metrics port reaches the Service, and the optional components render
// only when enabled.
func TestChartValues(t *testing.T) {
	out, _ := packageTo(t, sdkDir, PackageOptions{})
	dir := filepath.Join(out, "charts", "memcache-operator")
	defaults := render(t, dir, "ns", nil)
	var d appsv1.Deployment
	renderedObject(t, defaults, "Deployment", "controller-manager", &d)
	c := d.Spec.Template.Spec.Containers[0]
	wantArgs := []string{"--metrics-bind-address=:8443", "--metrics-secure=true", "--exporter-image=quay.io/prometheus/memcached-exporter:v0.15.0", "--leader-elect", "--health-probe-bind-address=:8081"}
	if !slices.Equal(c.Args, wantArgs) {
		t.Errorf("default args %q, want %q", c.Args, wantArgs)
	}
	if *d.Spec.Template.Spec.TerminationGracePeriodSeconds != 10 {
		t.Errorf("terminationGracePeriodSeconds %d, want the overlay's 10", *d.Spec.Template.Spec.TerminationGracePeriodSeconds)
	}
	for _, kind := range []string{"ServiceMonitor", "NetworkPolicy"} {
		if slices.ContainsFunc(kinds(t, defaults), func(k string) bool { return strings.HasPrefix(k, kind+" ") }) {
			t.Errorf("%s rendered by default; config/default leaves it out", kind)
		}
	}

	vals := map[string]any{
		"args":                          []any{"--zap-log-level=debug"},
		"env":                           []any{map[string]any{"name": "EXTRA", "value": "1"}},
		"envFrom":                       []any{map[string]any{"configMapRef": map[string]any{"name": "settings"}}},
		"podLabels":                     map[string]any{"team": "caches"},
		"podAnnotations":                map[string]any{"example.com/scrape": "true"},
		"priorityClassName":             "system-cluster-critical",
		"topologySpreadConstraints":     []any{map[string]any{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway"}},
		"strategy":                      map[string]any{"type": "Recreate"},
		"terminationGracePeriodSeconds": 0,
		"extraVolumes":                  []any{map[string]any{"name": "scratch", "emptyDir": map[string]any{}}},
		"extraVolumeMounts":             []any{map[string]any{"name": "scratch", "mountPath": "/scratch"}},
		"metrics":                       map[string]any{"port": 9443, "secure": false},
		"rbac":                          map[string]any{"helpers": map[string]any{"enabled": true}},
		"prometheus":                    map[string]any{"enabled": true},
		"networkPolicy":                 map[string]any{"enabled": true},
	}
	set := render(t, dir, "ns", vals, "monitoring.coreos.com/v1")
	d = appsv1.Deployment{}
	renderedObject(t, set, "Deployment", "controller-manager", &d)
	pod := d.Spec.Template.Spec
	c = pod.Containers[0]
	checks := []struct {
		what string
		ok   bool
	}{
		{"args", slices.Equal(c.Args, []string{"--metrics-bind-address=:9443", "--metrics-secure=false", "--exporter-image=quay.io/prometheus/memcached-exporter:v0.15.0", "--zap-log-level=debug"})},
		{"env", slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "EXTRA" && e.Value == "1" }) && slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "MEMCACHED_IMAGE" })},
		{"envFrom", len(c.EnvFrom) == 1 && c.EnvFrom[0].ConfigMapRef.Name == "settings"},
		{"podLabels", d.Spec.Template.Labels["team"] == "caches" && d.Spec.Template.Labels["control-plane"] == "controller-manager"},
		{"podAnnotations", d.Spec.Template.Annotations["example.com/scrape"] == "true" && d.Spec.Template.Annotations["kubectl.kubernetes.io/default-container"] == "manager"},
		{"priorityClassName", pod.PriorityClassName == "system-cluster-critical"},
		{"topologySpreadConstraints", len(pod.TopologySpreadConstraints) == 1 && pod.TopologySpreadConstraints[0].MaxSkew == 1},
		{"strategy", d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType},
		{"terminationGracePeriodSeconds", pod.TerminationGracePeriodSeconds != nil && *pod.TerminationGracePeriodSeconds == 0},
		{"extraVolumes", len(pod.Volumes) == 1 && pod.Volumes[0].Name == "scratch"},
		{"extraVolumeMounts", len(c.VolumeMounts) == 1 && c.VolumeMounts[0].MountPath == "/scratch"},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("%s not applied: %+v", ch.what, d.Spec)
		}
	}
	var svc corev1.Service
	renderedObject(t, set, "Service", "metrics", &svc)
	if p := svc.Spec.Ports[0]; p.Port != 9443 || p.TargetPort.IntValue() != 9443 {
		t.Errorf("metrics Service port %d → %s, want 9443 → 9443", p.Port, p.TargetPort.String())
	}
	got := strings.Join(kinds(t, set), "\n")
	for _, want := range []string{"ServiceMonitor kv-memcache-operator-controller-manager-metrics-monitor ns",
		"NetworkPolicy kv-memcache-operator-allow-metrics-traffic ns", "ClusterRole kv-memcache-operator-ns-memcache-admin-role"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered:\n%s\nwant %s", got, want)
		}
	}
	// The monitor and the policy select this release's objects.
	for _, doc := range renderedDocs(t, set) {
		if k := doc["kind"]; k == "NetworkPolicy" || k == "ServiceMonitor" {
			if b, _ := yaml.Marshal(doc); !strings.Contains(string(b), "app.kubernetes.io/instance: kv") {
				t.Errorf("%s does not select the release instance:\n%s", k, b)
			}
		}
	}
}
