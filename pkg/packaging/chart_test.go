package packaging

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

const sampleDir = "../../operators/sample"

// writeSample renders one output of the sample with gen into a temporary
// directory and returns its root (root/<name>).
func writeSample(t testing.TB, root string, gen func(*Project) (Files, []string, error)) string {
	t.Helper()
	p, err := Load(sampleDir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := gen(p)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := WriteFiles(out, files); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(out, root, p.Name)
}

// writeChart packages the sample's chart and returns its directory.
func writeChart(t testing.TB, opts ChartOptions) string {
	t.Helper()
	return writeSample(t, "charts", func(p *Project) (Files, []string, error) { return p.Chart(opts) })
}

// render renders the chart with values for a release in namespace.
func render(t *testing.T, dir, namespace string, values map[string]any, apis ...string) map[string]string {
	t.Helper()
	out, err := renderErr(dir, namespace, values, apis...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// renderErr is render returning the error, for charts that must refuse
// some values.
func renderErr(dir, namespace string, values map[string]any, apis ...string) (map[string]string, error) {
	c, err := loader.Load(dir)
	if err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.APIVersions = append(caps.APIVersions, apis...)
	vals, err := chartutil.ToRenderValues(c, values, chartutil.ReleaseOptions{Name: "kv", Namespace: namespace, IsInstall: true}, caps)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	out, err := engine.Render(c, vals)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	return out, nil
}

func TestChartLintsStrict(t *testing.T) {
	for _, mode := range []string{CRDsTemplated, CRDsSeparateChart, CRDsDir} {
		t.Run(mode, func(t *testing.T) {
			dir := writeChart(t, ChartOptions{CRDs: mode})
			for _, scope := range []string{"namespace", "cluster"} {
				l := lint.All(dir, map[string]any{"rbac": map[string]any{"scope": scope}}, "tenant-a", true)
				for _, m := range l.Messages {
					if m.Severity > support.InfoSev {
						t.Errorf("helm lint (rbac.scope=%s): %s", scope, m)
					}
				}
			}
		})
	}
}

// kinds lists the rendered objects as "Kind name namespace".
func kinds(t *testing.T, rendered map[string]string) []string {
	t.Helper()
	var out []string
	for _, name := range sortedKeys(rendered) {
		if strings.HasSuffix(name, "NOTES.txt") {
			continue
		}
		for _, doc := range strings.Split(rendered[name], "\n---") {
			var o struct {
				Kind     string
				Metadata struct{ Name, Namespace string }
			}
			if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
				t.Fatalf("%s does not render to YAML: %v\n%s", name, err, doc)
			}
			if o.Kind != "" {
				out = append(out, strings.TrimSpace(o.Kind+" "+o.Metadata.Name+" "+o.Metadata.Namespace))
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestChartRendersPerScope(t *testing.T) {
	dir := writeChart(t, ChartOptions{})
	common := func(ns string) []string {
		return []string{
			"ConfigMap kv-sample-operator-grafana-dashboard " + ns,
			"ConfigMap kvbackups.kv.opctl.dev-platform-as-code " + ns,
			"ConfigMap kvstores.kv.opctl.dev-platform-as-code " + ns,
			"Deployment kv-sample-operator-controller-manager " + ns,
			"Role kv-sample-operator-leader-election-role " + ns,
			"RoleBinding kv-sample-operator-leader-election-rolebinding " + ns,
			"Service kv-sample-operator-controller-manager-metrics " + ns,
			"ServiceAccount kv-sample-operator-controller-manager " + ns,
		}
	}
	tests := []struct {
		name, namespace string
		values          map[string]any
		want            []string
	}{
		{"namespace scope: Role per namespace, minimal ClusterRole", "tenant-a", nil, append(common("tenant-a"),
			"ClusterRole kv-sample-operator-tenant-a-manager-cluster",
			"ClusterRoleBinding kv-sample-operator-tenant-a-manager-cluster",
			"CustomResourceDefinition kvbackups.kv.opctl.dev",
			"CustomResourceDefinition kvstores.kv.opctl.dev",
			"Role kv-sample-operator-manager tenant-a",
			"RoleBinding kv-sample-operator-manager tenant-a")},
		{"namespace scope over two watched namespaces", "ops", map[string]any{"watchNamespaces": []any{"a", "b"}, "crds": map[string]any{"install": false}}, append(common("ops"),
			"ClusterRole kv-sample-operator-ops-manager-cluster",
			"ClusterRoleBinding kv-sample-operator-ops-manager-cluster",
			"Role kv-sample-operator-manager a", "Role kv-sample-operator-manager b",
			"RoleBinding kv-sample-operator-manager a", "RoleBinding kv-sample-operator-manager b")},
		{"cluster scope without CRDs", "ops", map[string]any{"rbac": map[string]any{"scope": "cluster"}, "crds": map[string]any{"install": false}}, append(common("ops"),
			"ClusterRole kv-sample-operator-ops-manager",
			"ClusterRoleBinding kv-sample-operator-ops-manager")},
		{"helper roles on request", "ops", map[string]any{"rbac": map[string]any{"scope": "cluster", "helpers": map[string]any{"enabled": true}}, "crds": map[string]any{"install": false}}, append(common("ops"),
			"ClusterRole kv-sample-operator-ops-editor-role",
			"ClusterRole kv-sample-operator-ops-viewer-role",
			"ClusterRole kv-sample-operator-ops-manager",
			"ClusterRoleBinding kv-sample-operator-ops-manager")},
		{"no RBAC, no metrics", "x", map[string]any{"rbac": map[string]any{"create": false}, "metrics": map[string]any{"enabled": false}, "crds": map[string]any{"install": false}}, []string{
			"ConfigMap kv-sample-operator-grafana-dashboard x",
			"ConfigMap kvbackups.kv.opctl.dev-platform-as-code x",
			"ConfigMap kvstores.kv.opctl.dev-platform-as-code x",
			"Deployment kv-sample-operator-controller-manager x",
			"ServiceAccount kv-sample-operator-controller-manager x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := kinds(t, render(t, dir, tt.namespace, tt.values))
			slices.Sort(tt.want)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("rendered:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestChartWatchNamespaceAndImage(t *testing.T) {
	dir := writeChart(t, ChartOptions{})
	tests := []struct {
		name   string
		values map[string]any
		want   []string
	}{
		{"defaults", nil, []string{`value: "tenant-a"`, `image: "opctl/kvstore-operator:0.1.0"`, `value: "valkey/valkey:8.1.3"`}},
		{"cluster scope watches all", map[string]any{"rbac": map[string]any{"scope": "cluster"}}, []string{`value: ""`}},
		{"digest and mirror", map[string]any{"image": map[string]any{"digest": "sha256:abc"}, "relatedImages": map[string]any{"kvstore": "mirror.example/valkey:8.1.3"}},
			[]string{`image: "opctl/kvstore-operator@sha256:abc"`, `value: "mirror.example/valkey:8.1.3"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := render(t, dir, "tenant-a", tt.values)["sample-operator/templates/deployment.yaml"]
			for _, w := range tt.want {
				if !strings.Contains(d, w) {
					t.Errorf("deployment lacks %s:\n%s", w, d)
				}
			}
		})
	}
}

func TestChartValuesSchemaRejectsBadValues(t *testing.T) {
	dir := writeChart(t, ChartOptions{})
	c, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"rbac": map[string]any{"scope": "everywhere"}}, "/rbac/scope"},
		{map[string]any{"replicas": "two"}, "/replicas"},
		{map[string]any{"imge": map[string]any{}}, "imge"},
	} {
		_, err := chartutil.ToRenderValues(c, tt.values, chartutil.ReleaseOptions{Name: "kv", Namespace: "x"}, chartutil.DefaultCapabilities)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("values %v: err %v, want a schema error naming %s", tt.values, err, tt.want)
		}
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Template delimiters in object data survive the chart: Helm renders them
// back to themselves.
func TestChartEscapesTemplateDelimiters(t *testing.T) {
	tp := newTemplater("c", "", "")
	const data = "{{ $labels.tenant }} is at {{ $value }}; legend {{condition}} }} {{"
	out, err := tp.finish(map[string]any{"summary": data})
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := template.New("x").Parse(out)
	if err != nil {
		t.Fatalf("the escaped object is not a valid template: %v\n%s", err, out)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, nil); err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := yaml.Unmarshal([]byte(b.String()), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if got["summary"] != data {
		t.Errorf("rendered %q, want %q", got["summary"], data)
	}
}

// Prometheus operator kinds render only where their API exists.
func TestChartGatesMonitoringKinds(t *testing.T) {
	p := &Project{}
	rule := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
		"metadata": map[string]any{"name": "alerts"}, "spec": map[string]any{"groups": []any{}},
	}}
	text, _, err := p.objectTemplate(newTemplater("c", "", ""), rule, Grant{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, `{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}`) {
		t.Errorf("PrometheusRule template is not gated on its API:\n%s", text)
	}
}
