package tenancy

import (
	"slices"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

const crdYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
`

func TestWithoutCRDs(t *testing.T) {
	ch := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "demo", Version: "1.0.0"},
		Values:   map[string]any{"crds": map[string]any{"install": false}},
		Templates: []*chart.File{
			{Name: "templates/crd.yaml", Data: []byte("{{- if .Values.crds.install }}\n" + crdYAML + "{{- end }}\n")},
			{Name: "templates/crd-always.yaml", Data: []byte(crdYAML)},
			{Name: "templates/mixed.yaml", Data: []byte(crdYAML + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")},
			{Name: "templates/sa.yaml", Data: []byte("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n")},
			{Name: "templates/empty.yaml", Data: []byte("{{- if false }}x: y{{ end }}\n")},
			{Name: "templates/_helpers.tpl", Data: []byte(`{{- define "demo.x" }}x{{ end }}`)},
			{Name: "templates/NOTES.txt", Data: []byte("installed")},
		},
		Files: []*chart.File{
			{Name: "crds/other.yaml", Data: []byte(crdYAML)},
			{Name: "README.md", Data: []byte("# demo")},
		},
	}
	lc := &loadedChart{key: "test", chart: ch}
	rendered, err := lc.Render("r", "ns", map[string]any{"crds": map[string]any{"install": true}}, chartutil.DefaultCapabilities.KubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	got := lc.withoutCRDs(rendered)
	var templates, files []string
	for _, f := range got.Templates {
		templates = append(templates, f.Name)
	}
	for _, f := range got.Files {
		files = append(files, f.Name)
	}
	wantTemplates := []string{"templates/mixed.yaml", "templates/sa.yaml", "templates/empty.yaml", "templates/_helpers.tpl", "templates/NOTES.txt"}
	if !slices.Equal(templates, wantTemplates) {
		t.Errorf("templates = %v, want %v", templates, wantTemplates)
	}
	if !slices.Equal(files, []string{"README.md"}) {
		t.Errorf("files = %v, want [README.md]", files)
	}
	if len(ch.Templates) != 7 || len(ch.Files) != 2 {
		t.Errorf("the loaded chart changed: %d templates, %d files", len(ch.Templates), len(ch.Files))
	}
}
