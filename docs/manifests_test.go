package docs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/crschema"
)

// crdDirs hold the CRDs whose objects the docs show.
var crdDirs = []string{"config/crd/bases", "operators/sample/config/crd/bases"}

// heredocRE opens a here-document (<<'YAML', <<EOF, <<-X).
var heredocRE = regexp.MustCompile(`<<-?\s*['"]?(\w+)['"]?`)

// manifest is YAML the docs show: a whole object, or a Tenant spec
// fragment (a block that starts at `operators:`).
type manifest struct {
	file string
	line int
	text string
}

// manifests collects the yaml blocks and the here-documents of shell blocks.
func manifests(docs []doc) []manifest {
	var out []manifest
	for _, d := range docs {
		for _, b := range d.blocks {
			switch b.info {
			case "yaml", "yml":
				out = append(out, manifest{b.file, b.line + 1, b.text})
			case "sh", "bash", "shell":
				lines := strings.Split(b.text, "\n")
				for i := 0; i < len(lines); i++ {
					m := heredocRE.FindStringSubmatch(lines[i])
					if m == nil {
						continue
					}
					start := i + 1
					for i++; i < len(lines) && strings.TrimSpace(lines[i]) != m[1]; i++ {
					}
					out = append(out, manifest{b.file, b.line + 1 + start, strings.Join(lines[start:i], "\n")})
				}
			}
		}
	}
	return out
}

// crdIndex loads the CRDs by group and kind.
func crdIndex() (map[string]*apiextensionsv1.CustomResourceDefinition, error) {
	index := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, dir := range crdDirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.yaml"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(b, crd); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			index[crd.Spec.Group+"/"+crd.Spec.Names.Kind] = crd
		}
	}
	return index, nil
}

// checkObject validates obj against its CRD as the API server would on
// create: unknown fields, the schema and the CEL rules.
func checkObject(crd *apiextensionsv1.CustomResourceDefinition, version string, obj map[string]any) error {
	var schema *apiextensionsv1.JSONSchemaProps
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Schema != nil {
			schema = v.Schema.OpenAPIV3Schema
		}
	}
	if schema == nil {
		return fmt.Errorf("%s serves no version %q with a schema", crd.Name, version)
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(schema, internal, nil); err != nil {
		return err
	}
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return err
	}
	var problems []string
	copied := map[string]any{}
	if err := roundTrip(obj, &copied); err != nil {
		return err
	}
	for _, p := range pruning.PruneWithOptions(copied, s, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		problems = append(problems, "unknown field "+p)
	}
	errs, err := crschema.Validate(crd, version, obj)
	if err != nil {
		return err
	}
	celErrs, _ := cel.NewValidator(s, true, celconfig.PerCallLimit).Validate(context.Background(), nil, s, copied, nil, celconfig.RuntimeCELCostBudget)
	for _, e := range append(errs, celErrs...) {
		problems = append(problems, e.Error())
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

func roundTrip(in any, out any) error {
	b, err := yaml.Marshal(in)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(b, out)
}

// asObjects turns a manifest into the objects it holds; a Tenant spec
// fragment is wrapped in a Tenant with the required fields it lacks.
func asObjects(text string) ([]map[string]any, error) {
	var out []map[string]any
	for _, part := range regexp.MustCompile(`(?m)^---\s*$`).Split(text, -1) {
		var v any
		if err := yaml.Unmarshal([]byte(part), &v); err != nil {
			return nil, err
		}
		obj, ok := v.(map[string]any)
		if !ok {
			continue // a list (a CI step), or nothing
		}
		if _, fragment := obj["operators"]; fragment && obj["apiVersion"] == nil {
			if obj["namespaces"] == nil {
				obj["namespaces"] = []any{"docs"}
			}
			obj = map[string]any{"apiVersion": "tenancy.opctl.dev/v1alpha1", "kind": "Tenant", "metadata": map[string]any{"name": "docs"}, "spec": obj}
		}
		out = append(out, obj)
	}
	return out, nil
}

func TestManifests(t *testing.T) {
	docs, err := loadDocs()
	if err != nil {
		t.Fatal(err)
	}
	index, err := crdIndex()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, m := range manifests(docs) {
		objs, err := asObjects(m.text)
		if err != nil {
			t.Errorf("%s:%d: YAML: %v", m.file, m.line, err)
			continue
		}
		for _, obj := range objs {
			apiVersion, _ := obj["apiVersion"].(string)
			kind, _ := obj["kind"].(string)
			group, version, found := strings.Cut(apiVersion, "/")
			crd := index[group+"/"+kind]
			if !found || crd == nil {
				continue // not one of ours (a CatalogSource)
			}
			checked++
			if err := checkObject(crd, version, obj); err != nil {
				t.Errorf("%s:%d: %s: %v", m.file, m.line, kind, err)
			}
		}
	}
	if checked < 4 {
		t.Fatalf("checked %d manifests; the extraction is broken", checked)
	}
}

// TestCheckObject shows that a wrong Tenant is refused, for each reason.
func TestCheckObject(t *testing.T) {
	index, err := crdIndex()
	if err != nil {
		t.Fatal(err)
	}
	crd := index["tenancy.opctl.dev/Tenant"]
	if crd == nil {
		t.Fatal("no Tenant CRD in " + strings.Join(crdDirs, ", "))
	}
	tests := []struct {
		name, yaml, wantErr string
	}{
		{"a fragment", "operators:\n- name: kv\n  chart: {path: charts/x}\n", ""},
		{"a Tenant", "apiVersion: tenancy.opctl.dev/v1alpha1\nkind: Tenant\nmetadata: {name: x}\nspec: {namespaces: [x]}\n", ""},
		{"an unknown field", "operators: []\nnamespace: a\n", "unknown field spec.namespace"},
		{"a wrong type", "operators: []\nnamespaces: a\n", "spec.namespaces"},
		{"a missing required field", "apiVersion: tenancy.opctl.dev/v1alpha1\nkind: Tenant\nmetadata: {name: x}\nspec: {paused: true}\n", "spec.namespaces: Required value"},
		{"a CEL rule", "operators:\n- name: kv\n  chart: {path: charts/x}\n  olm: {package: p, catalog: {name: c}}\n", "set exactly one of chart, olm and bundle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := asObjects(tt.yaml)
			if err != nil || len(objs) != 1 {
				t.Fatalf("asObjects: %d objects, %v", len(objs), err)
			}
			err = checkObject(crd, "v1alpha1", objs[0])
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}
