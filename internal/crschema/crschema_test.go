package crschema

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

const crdYAML = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [state, size]
            properties:
              state: {type: string, default: Managed, enum: [Managed, Unmanaged]}
              size: {type: integer, minimum: 1}
              note: {type: string}
`

// The API server's create path, not the bare schema: nulls of
// non-nullable fields are dropped, defaults fill required fields, unknown
// fields are pruned; what is still wrong is an error.
func TestValidate(t *testing.T) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal([]byte(crdYAML), &crd); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cr, want string // want: "" for valid, else a text of the error
	}{
		{"valid", "spec: {size: 2}", ""},
		{"a required field with a default is defaulted", "spec: {size: 1, note: x}", ""},
		{"an unknown field is pruned", "spec: {size: 1, colour: blue}", ""},
		{"a null note is dropped", "spec: {size: 1, note: null}", ""},
		{"a null spec (kubebuilder's scaffold sample) is dropped", "spec: null", ""},
		{"a required field without a default", "spec: {note: x}", "spec.size: Required value"},
		{"below the minimum", "spec: {size: 0}", "spec.size"},
		{"not in the enum", "spec: {size: 1, state: Gone}", "spec.state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"+tt.cr), &obj); err != nil {
				t.Fatal(err)
			}
			errs, err := Validate(&crd, "v1", obj)
			if err != nil {
				t.Fatal(err)
			}
			got := errs.ToAggregate()
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("errors %v, want none", got)
			case tt.want != "" && (got == nil || !strings.Contains(got.Error(), tt.want)):
				t.Errorf("errors %v, want one holding %q", got, tt.want)
			}
			if spec, _ := obj["spec"].(map[string]any); spec["state"] != nil && !strings.Contains(tt.cr, "state") {
				t.Error("Validate changed its input")
			}
		})
	}
	if _, err := Validate(&crd, "v2", map[string]any{}); err == nil {
		t.Error("a version the CRD does not have: no error")
	}
}
