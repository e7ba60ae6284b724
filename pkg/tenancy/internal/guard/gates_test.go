package guard

import (
	"maps"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
)

// A template whose first action is a condition on one value is gated by
// that value; any other is not.
func TestTemplateGates(t *testing.T) {
	tmpl := func(name, data string) *chart.File { return &chart.File{Name: name, Data: []byte(data)} }
	sub := &chart.Chart{Metadata: &chart.Metadata{Name: "sub"}, Templates: []*chart.File{tmpl("templates/ns.yaml", "{{ if .Values.namespace.create -}}\nkind: Namespace\n{{ end }}")}}
	ch := &chart.Chart{Metadata: &chart.Metadata{Name: "op"}, Templates: []*chart.File{
		tmpl("templates/apiservice.yaml", "{{- if .Values.apiService.enabled }}\nkind: APIService\n{{- end }}\n"),
		tmpl("templates/deployment.yaml", "kind: Deployment\n{{- if .Values.x }}\n{{- end }}\n"),
		tmpl("templates/both.yaml", "{{- if and .Values.a .Values.b }}\nkind: X\n{{- end }}\n"),
		tmpl("templates/not.yaml", "{{- if not .Values.a }}\nkind: X\n{{- end }}\n"),
	}}
	ch.AddDependency(sub)
	want := map[string]string{"op/templates/apiservice.yaml": "apiService.enabled", "op/charts/sub/templates/ns.yaml": "namespace.create"}
	if got := TemplateGates(ch); !maps.Equal(got, want) {
		t.Errorf("gates %v, want %v", got, want)
	}
}
