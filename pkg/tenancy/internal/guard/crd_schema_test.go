package guard

import (
	"errors"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// baseSchema is the openAPIV3Schema the skew cases start from.
const baseSchema = `
type: object
properties:
  apiVersion: {type: string}
  kind: {type: string}
  metadata: {type: object}
  spec:
    type: object
    required: [size]
    properties:
      size: {type: integer, minimum: 1, maximum: 10}
      ratio: {type: number}
      mode: {type: string, enum: [cache, store]}
      name: {type: string, maxLength: 20, minLength: 1, pattern: "^[a-z]+$"}
      note: {type: string, nullable: true}
      replicas: {type: integer, format: int32}
      port:
        x-kubernetes-int-or-string: true
        anyOf: [{type: integer}, {type: string}]
      config:
        type: object
        x-kubernetes-preserve-unknown-fields: true
      labels:
        type: object
        additionalProperties: {type: string}
      ports:
        type: array
        maxItems: 5
        items:
          type: object
          properties:
            name: {type: string}
  status:
    type: object
    properties:
      phase: {type: string}
`

// schemaFrom decodes a schema in YAML.
func schemaFrom(t testing.TB, y string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	s := &apiextensionsv1.JSONSchemaProps{}
	if err := yaml.Unmarshal([]byte(y), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// skewCRD is widgets.example.com with one version v1 (served, storage,
// stored) of schema s.
func skewCRD(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = "widgets.example.com"
	crd.Spec.Group = "example.com"
	crd.Spec.Scope = apiextensionsv1.NamespaceScoped
	crd.Spec.Names = apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"}
	crd.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: s}}}
	crd.Status.StoredVersions = []string{"v1"}
	return crd
}

// specEdit edits the schema of .spec.
func specEdit(edit func(spec *apiextensionsv1.JSONSchemaProps)) func(*apiextensionsv1.CustomResourceDefinition) {
	return func(crd *apiextensionsv1.CustomResourceDefinition) {
		root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
		spec := root.Properties["spec"]
		edit(&spec)
		root.Properties["spec"] = spec
	}
}

// field edits the schema of .spec.<name>.
func field(name string, edit func(f *apiextensionsv1.JSONSchemaProps)) func(*apiextensionsv1.CustomResourceDefinition) {
	return specEdit(func(spec *apiextensionsv1.JSONSchemaProps) {
		f := spec.Properties[name]
		edit(&f)
		spec.Properties[name] = f
	})
}

func addField(name string, s apiextensionsv1.JSONSchemaProps) func(*apiextensionsv1.CustomResourceDefinition) {
	return specEdit(func(spec *apiextensionsv1.JSONSchemaProps) { spec.Properties[name] = s })
}

func dropField(name string) func(*apiextensionsv1.CustomResourceDefinition) {
	return specEdit(func(spec *apiextensionsv1.JSONSchemaProps) { delete(spec.Properties, name) })
}

// newer adds the field extra and makes the other edits: a definition the
// live one does not serve, which CompareCRD must apply or refuse.
func newer(e ...func(*apiextensionsv1.CustomResourceDefinition)) func(*apiextensionsv1.CustomResourceDefinition) {
	return edits(append([]func(*apiextensionsv1.CustomResourceDefinition){addField("extra", apiextensionsv1.JSONSchemaProps{Type: "string"})}, e...)...)
}

// edits applies several edits in order.
func edits(e ...func(*apiextensionsv1.CustomResourceDefinition)) func(*apiextensionsv1.CustomResourceDefinition) {
	return func(crd *apiextensionsv1.CustomResourceDefinition) {
		for _, f := range e {
			f(crd)
		}
	}
}

func enumOf(values ...string) []apiextensionsv1.JSON {
	var out []apiextensionsv1.JSON
	for _, v := range values {
		out = append(out, apiextensionsv1.JSON{Raw: []byte(`"` + v + `"`)})
	}
	return out
}

// secondVersion adds version v2 (served, not storage) with v1's schema
// edited by edit; storage moves it to storage.
func secondVersion(storage bool, edit func(*apiextensionsv1.JSONSchemaProps)) func(*apiextensionsv1.CustomResourceDefinition) {
	return func(crd *apiextensionsv1.CustomResourceDefinition) {
		v2 := *crd.Spec.Versions[0].DeepCopy()
		v2.Name, v2.Storage = "v2", storage
		if storage {
			crd.Spec.Versions[0].Storage = false
		}
		if edit != nil {
			edit(v2.Schema.OpenAPIV3Schema)
		}
		crd.Spec.Versions = append(crd.Spec.Versions, v2)
	}
}

// inSpec edits the .spec of a version's schema.
func inSpec(edit func(spec *apiextensionsv1.JSONSchemaProps)) func(*apiextensionsv1.JSONSchemaProps) {
	return func(root *apiextensionsv1.JSONSchemaProps) {
		spec := root.Properties["spec"]
		edit(&spec)
		root.Properties["spec"] = spec
	}
}

func webhookConversion(crd *apiextensionsv1.CustomResourceDefinition) {
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"},
			ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: ptr.To("https://convert.example.com")}}}
}

func preserveUnknown(f *apiextensionsv1.JSONSchemaProps) { f.XPreserveUnknownFields = ptr.To(true) }

func noPreserve(f *apiextensionsv1.JSONSchemaProps) { f.XPreserveUnknownFields = nil }

// skewCases are CompareCRD's cases: live and want start from baseSchema
// and are edited. skew is a substring of the refusal; checks, the notes
// StoredObjectsFit would run.
var skewCases = []struct {
	name       string
	live, want func(*apiextensionsv1.CustomResourceDefinition)
	do         CRDDecision
	skew       string
	checks     string
}{
	// Compatible.
	{name: "identical", do: CrdKeep},
	{name: "a new optional field", want: addField("extra", apiextensionsv1.JSONSchemaProps{Type: "string"}), do: CrdApply},
	{name: "an enum widened", want: field("mode", func(f *apiextensionsv1.JSONSchemaProps) { f.Enum = enumOf("cache", "store", "queue") }), do: CrdApply},
	{name: "a description changed", want: field("size", func(f *apiextensionsv1.JSONSchemaProps) { f.Description = "Size in GiB." }), do: CrdKeep},
	{name: "bounds loosened", want: edits(
		field("size", func(f *apiextensionsv1.JSONSchemaProps) { f.Maximum, f.Minimum = ptr.To(20.0), nil }),
		field("name", func(f *apiextensionsv1.JSONSchemaProps) {
			f.MaxLength, f.MinLength, f.Pattern = ptr.To[int64](40), nil, ""
		}),
		field("ports", func(f *apiextensionsv1.JSONSchemaProps) { f.MaxItems = nil })), do: CrdApply},
	{name: "a type widened: integer to number", want: field("size", func(f *apiextensionsv1.JSONSchemaProps) { f.Type = "number" }), do: CrdApply},
	{name: "a type widened: integer to int-or-string", want: field("replicas", func(f *apiextensionsv1.JSONSchemaProps) {
		f.Type, f.Format, f.XIntOrString = "", "", true
		f.AnyOf = []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}
	}), do: CrdApply},
	{name: "a format widened: int32 to int64", want: newer(field("replicas", func(f *apiextensionsv1.JSONSchemaProps) { f.Format = "int64" })), do: CrdApply},
	{name: "stricter only, same fields: the live CRD serves it", want: field("size", func(f *apiextensionsv1.JSONSchemaProps) { f.Maximum = ptr.To(5.0) }), do: CrdKeep},
	{name: "nullable added", want: field("name", func(f *apiextensionsv1.JSONSchemaProps) { f.Nullable = true }), do: CrdApply},
	{name: "a required field no longer required", want: specEdit(func(s *apiextensionsv1.JSONSchemaProps) { s.Required = nil }), do: CrdApply},
	// The live CRD converts through the same webhook: a change of
	// conversion is refused on its own (metaSkew).
	{name: "a new served version with a webhook conversion", live: webhookConversion, want: edits(secondVersion(false, func(s *apiextensionsv1.JSONSchemaProps) {
		spec := s.Properties["spec"]
		spec.Properties = map[string]apiextensionsv1.JSONSchemaProps{"capacity": {Type: "string"}}
		spec.Required = nil
		s.Properties["spec"] = spec
	}), webhookConversion), do: CrdApply},
	{name: "a new served version with conversion None and the same schema", want: secondVersion(false, nil), do: CrdApply},
	{name: "storage moves with conversion None to an equal schema", live: secondVersion(false, nil), want: secondVersion(true, nil), do: CrdKeep},
	{name: "storage moves to a wider schema with conversion None", live: secondVersion(false, nil),
		want: secondVersion(true, func(s *apiextensionsv1.JSONSchemaProps) {
			spec := s.Properties["spec"]
			spec.Properties["capacity"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
			s.Properties["spec"] = spec
		}), do: CrdApply},
	{name: "a field declared under preserve-unknown-fields, kept", want: field("config", func(f *apiextensionsv1.JSONSchemaProps) {
		f.Properties = map[string]apiextensionsv1.JSONSchemaProps{"maxmemory": {Type: "string"}}
	}), do: CrdApply, checks: ".spec.config.maxmemory: kept whole under x-kubernetes-preserve-unknown-fields before, declared now"},
	{name: "a new validation rule and a field", want: newer(specEdit(func(s *apiextensionsv1.JSONSchemaProps) {
		s.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size <= 5", Message: "too big"}}
	})), do: CrdApply, checks: `.spec: validation rule "self.size <= 5" added`},
	{name: "a list made a set", want: newer(field("ports", func(f *apiextensionsv1.JSONSchemaProps) {
		f.XListType = ptr.To("map")
		f.XListMapKeys = []string{"name"}
	})),
		do: CrdApply, checks: ".spec.ports: x-kubernetes-list-type changed from atomic to map"},

	// Older definitions: the live one serves them.
	{name: "older: a field fewer", want: dropField("note"), do: CrdKeep},
	{name: "older: a smaller enum", want: field("mode", func(f *apiextensionsv1.JSONSchemaProps) { f.Enum = enumOf("store") }), do: CrdKeep},
	{name: "older: without the live rule", live: specEdit(func(s *apiextensionsv1.JSONSchemaProps) {
		s.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size <= 5"}}
	}), do: CrdKeep},
	{name: "older by its names, not by its structure: a narrower type", want: edits(dropField("note"),
		field("size", func(f *apiextensionsv1.JSONSchemaProps) { f.Type = "string"; f.Minimum, f.Maximum = nil, nil })),
		skew: ".spec.size: type changed from integer to string"},

	// Refused: x-kubernetes-preserve-unknown-fields or additionalProperties dropped.
	{name: "preserve-unknown-fields removed on a field, while adding one", want: newer(field("config", noPreserve)),
		skew: "narrows version v1, which tenants' objects are stored and served in: .spec.config: x-kubernetes-preserve-unknown-fields removed"},
	{name: "preserve-unknown-fields removed on .spec (the red team's)", live: specEdit(preserveUnknown),
		want: addField("extra", apiextensionsv1.JSONSchemaProps{Type: "string"}), skew: ".spec: x-kubernetes-preserve-unknown-fields removed"},
	{name: "preserve-unknown-fields removed at the root", live: func(crd *apiextensionsv1.CustomResourceDefinition) {
		preserveUnknown(crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
	}, want: addField("extra", apiextensionsv1.JSONSchemaProps{Type: "string"}), skew: "v1, which tenants' objects are stored and served in: .: x-kubernetes-preserve-unknown-fields removed"},
	{name: "preserve-unknown-fields removed on items", live: field("ports", func(f *apiextensionsv1.JSONSchemaProps) { preserveUnknown(f.Items.Schema) }),
		want: addField("extra", apiextensionsv1.JSONSchemaProps{Type: "string"}), skew: ".spec.ports[*]: x-kubernetes-preserve-unknown-fields removed"},
	{name: "preserve-unknown-fields removed on map values", live: field("labels", func(f *apiextensionsv1.JSONSchemaProps) {
		f.AdditionalProperties.Schema = &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	}), want: newer(field("labels", func(f *apiextensionsv1.JSONSchemaProps) {
		f.AdditionalProperties.Schema = &apiextensionsv1.JSONSchemaProps{Type: "object"}
	})), skew: ".spec.labels.*: x-kubernetes-preserve-unknown-fields removed"},
	{name: "map keys no longer reachable: additionalProperties removed", want: field("labels", func(f *apiextensionsv1.JSONSchemaProps) {
		f.AdditionalProperties = nil
		f.Properties = map[string]apiextensionsv1.JSONSchemaProps{"app": {Type: "string"}}
	}), skew: ".spec.labels: additionalProperties removed"},
	{name: "a field kept under preserve-unknown-fields pruned by a declared object", want: field("config", func(f *apiextensionsv1.JSONSchemaProps) {
		f.XPreserveUnknownFields = nil
		f.Properties = map[string]apiextensionsv1.JSONSchemaProps{"maxmemory": {Type: "string"}}
	}), skew: ".spec.config: x-kubernetes-preserve-unknown-fields removed"},

	// Refused: types.
	{name: "integer to string", want: newer(field("size", func(f *apiextensionsv1.JSONSchemaProps) { f.Type = "string"; f.Minimum, f.Maximum = nil, nil })),
		skew: ".spec.size: type changed from integer to string"},
	{name: "number to integer", want: newer(field("ratio", func(f *apiextensionsv1.JSONSchemaProps) { f.Type = "integer" })), skew: ".spec.ratio: type narrowed from number to integer"},
	{name: "int-or-string dropped", want: newer(field("port", func(f *apiextensionsv1.JSONSchemaProps) { f.XIntOrString, f.AnyOf, f.Type = false, nil, "string" })),
		skew: ".spec.port: type narrowed from int-or-string to string"},
	{name: "nullable removed", want: newer(field("note", func(f *apiextensionsv1.JSONSchemaProps) { f.Nullable = false })), skew: ".spec.note: nullable removed"},
	{name: "an object made a string", want: newer(field("labels", func(f *apiextensionsv1.JSONSchemaProps) { *f = apiextensionsv1.JSONSchemaProps{Type: "string"} })),
		skew: ".spec.labels: type changed from object to string"},

	// Refused: enums.
	{name: "an enum value removed", want: newer(field("mode", func(f *apiextensionsv1.JSONSchemaProps) { f.Enum = enumOf("store") })), skew: `.spec.mode: enum value "cache" removed`},
	{name: "an enum added", want: newer(field("name", func(f *apiextensionsv1.JSONSchemaProps) { f.Enum = enumOf("a") })), skew: ".spec.name: enum added"},

	// Refused: a default every stored object would read.
	{name: "a new field with a default (and a rule)", want: addField("tuning", apiextensionsv1.JSONSchemaProps{Type: "object",
		Default:      &apiextensionsv1.JSON{Raw: []byte(`{}`)},
		XValidations: apiextensionsv1.ValidationRules{{Rule: "size(self) < 3"}}}), skew: ".spec.tuning: new field with default {} (every stored object would read it)"},

	// Refused: required.
	{name: "a new required field", want: newer(specEdit(func(s *apiextensionsv1.JSONSchemaProps) { s.Required = []string{"size", "extra"} })), skew: ".spec.extra: new required field"},
	{name: "a field newly required", want: newer(specEdit(func(s *apiextensionsv1.JSONSchemaProps) { s.Required = []string{"size", "mode"} })), skew: ".spec.mode: newly required"},
	{name: "a field newly required in items", want: newer(field("ports", func(f *apiextensionsv1.JSONSchemaProps) { f.Items.Schema.Required = []string{"name"} })),
		skew: ".spec.ports[*].name: newly required"},

	// Refused: tighter bounds.
	{name: "maximum lowered", want: newer(field("size", func(f *apiextensionsv1.JSONSchemaProps) { f.Maximum = ptr.To(5.0) })), skew: ".spec.size: maximum lowered from 10 to 5"},
	{name: "maximum made exclusive", want: newer(field("size", func(f *apiextensionsv1.JSONSchemaProps) { f.ExclusiveMaximum = true })), skew: ".spec.size: maximum 10 made exclusive"},
	{name: "minimum raised", want: newer(field("size", func(f *apiextensionsv1.JSONSchemaProps) { f.Minimum = ptr.To(2.0) })), skew: ".spec.size: minimum raised from 1 to 2"},
	{name: "minimum added", want: newer(field("ratio", func(f *apiextensionsv1.JSONSchemaProps) { f.Minimum = ptr.To(0.5) })), skew: ".spec.ratio: minimum 0.5 added"},
	{name: "maxLength lowered", want: newer(field("name", func(f *apiextensionsv1.JSONSchemaProps) { f.MaxLength = ptr.To[int64](8) })), skew: ".spec.name: maxLength lowered from 20 to 8"},
	{name: "minLength raised", want: newer(field("name", func(f *apiextensionsv1.JSONSchemaProps) { f.MinLength = ptr.To[int64](3) })), skew: ".spec.name: minLength raised from 1 to 3"},
	{name: "maxItems lowered", want: newer(field("ports", func(f *apiextensionsv1.JSONSchemaProps) { f.MaxItems = ptr.To[int64](2) })), skew: ".spec.ports: maxItems lowered from 5 to 2"},
	{name: "minItems added", want: newer(field("ports", func(f *apiextensionsv1.JSONSchemaProps) { f.MinItems = ptr.To[int64](1) })), skew: ".spec.ports: minItems 1 added"},
	{name: "maxProperties added", want: newer(field("labels", func(f *apiextensionsv1.JSONSchemaProps) { f.MaxProperties = ptr.To[int64](4) })), skew: ".spec.labels: maxProperties 4 added"},
	{name: "pattern changed", want: newer(field("name", func(f *apiextensionsv1.JSONSchemaProps) { f.Pattern = "^[a-z]{2,}$" })), skew: `.spec.name: pattern changed from "^[a-z]+$" to "^[a-z]{2,}$"`},
	{name: "pattern added", want: newer(field("note", func(f *apiextensionsv1.JSONSchemaProps) { f.Pattern = "^x" })), skew: `.spec.note: pattern "^x" added`},
	{name: "format added", want: newer(field("note", func(f *apiextensionsv1.JSONSchemaProps) { f.Format = "date-time" })), skew: `.spec.note: format "date-time" added`},
	{name: "multipleOf added", want: newer(field("ratio", func(f *apiextensionsv1.JSONSchemaProps) { f.MultipleOf = ptr.To(0.5) })), skew: ".spec.ratio: multipleOf 0.5 added"},

	// Refused: fields removed, versions dropped, storage moved without conversion.
	{name: "a field removed while adding one", want: edits(dropField("mode"), addField("extra", apiextensionsv1.JSONSchemaProps{Type: "string"})),
		skew: "removes fields from storage version v1 that tenants' objects may use: .spec.mode"},
	{name: "a status field removed", want: func(crd *apiextensionsv1.CustomResourceDefinition) {
		root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
		root.Properties["status"] = apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"ready": {Type: "boolean"}}}
	}, skew: "removes fields from storage version v1 that tenants' objects may use: .status.phase"},
	{name: "a stored version no longer served", want: func(crd *apiextensionsv1.CustomResourceDefinition) { crd.Spec.Versions[0].Name = "v2" },
		skew: "stops serving version v1, which objects are still stored in"},
	{name: "storage moves with conversion None and the schemas differ", live: secondVersion(false, inSpec(func(s *apiextensionsv1.JSONSchemaProps) {
		delete(s.Properties, "mode")
	})), want: secondVersion(true, inSpec(func(s *apiextensionsv1.JSONSchemaProps) {
		delete(s.Properties, "mode")
		s.Properties["capacity"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	})), skew: "moves storage from version v1 to v2 with conversion strategy None, and v2 lacks fields of v1 that tenants' objects may use: .spec.mode"},
	{name: "storage moves with a webhook conversion", live: edits(secondVersion(false, inSpec(func(s *apiextensionsv1.JSONSchemaProps) {
		delete(s.Properties, "mode")
	})), webhookConversion), want: edits(secondVersion(true, inSpec(func(s *apiextensionsv1.JSONSchemaProps) {
		delete(s.Properties, "mode")
		s.Properties["capacity"] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	})), webhookConversion), do: CrdApply},
	{name: "a new version with conversion None that lacks fields", want: secondVersion(false, func(s *apiextensionsv1.JSONSchemaProps) {
		spec := s.Properties["spec"]
		delete(spec.Properties, "labels")
		s.Properties["spec"] = spec
	}), skew: "adds version v2 with conversion strategy None, which serves the objects of storage version v1 without fields they may use: .spec.labels"},
}

func TestCompareCRDSchemas(t *testing.T) {
	for _, tc := range skewCases {
		t.Run(tc.name, func(t *testing.T) {
			live, want := skewCRD(schemaFrom(t, baseSchema)), skewCRD(schemaFrom(t, baseSchema))
			want.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
			if tc.live != nil {
				tc.live(live)
			}
			if tc.want != nil {
				tc.want(want)
			}
			got, err := CompareCRD(live, want)
			var skew *SkewError
			switch {
			case tc.skew != "":
				if !errors.As(err, &skew) || !strings.Contains(err.Error(), tc.skew) {
					t.Fatalf("CompareCRD: %v, want a SkewError containing %q", err, tc.skew)
				}
				t.Logf("refused: %v", err)
			case err != nil:
				t.Fatalf("CompareCRD: unexpected refusal %v", err)
			case got != tc.do:
				t.Fatalf("CompareCRD decided %v, want %v", got, tc.do)
			}
			changes, err := diffCRD(live, want)
			if err != nil && tc.skew == "" {
				t.Fatal(err)
			}
			var checks []string
			for _, c := range changes {
				for _, n := range c.diff.checks {
					checks = append(checks, n.String())
				}
			}
			if got := strings.Join(checks, "; "); tc.skew == "" && (!strings.Contains(got, tc.checks) || tc.checks == "" && got != "") {
				t.Errorf("checks for the stored objects %q, want %q", got, tc.checks)
			}
		})
	}
}

// ReplaceSkew is OLM's view: an older definition that takes what live
// holds is refused too, not kept.
func TestReplaceSkew(t *testing.T) {
	live := skewCRD(schemaFrom(t, baseSchema))
	older := skewCRD(schemaFrom(t, baseSchema))
	field("mode", func(f *apiextensionsv1.JSONSchemaProps) { f.Enum = enumOf("store") })(older)
	if d, err := CompareCRD(live, older); err != nil || d != CrdKeep {
		t.Fatalf("CompareCRD of an older definition: %v, %v; want keep", d, err)
	}
	var skew *SkewError
	if err := ReplaceSkew(live, older); !errors.As(err, &skew) || !strings.Contains(err.Error(), `.spec.mode: enum value "cache" removed`) {
		t.Errorf("ReplaceSkew of an older definition: %v", err)
	}
	if err := ReplaceSkew(live, skewCRD(schemaFrom(t, baseSchema))); err != nil {
		t.Errorf("ReplaceSkew of the same definition: %v", err)
	}
}

// A refusal lists a bounded number of changes.
func TestSkewMessageBounded(t *testing.T) {
	live, want := skewCRD(schemaFrom(t, baseSchema)), skewCRD(schemaFrom(t, baseSchema))
	specEdit(func(s *apiextensionsv1.JSONSchemaProps) {
		for k, f := range s.Properties {
			f.Type = "boolean"
			s.Properties[k] = f
		}
	})(want)
	_, err := CompareCRD(live, want)
	if err == nil || !strings.Contains(err.Error(), "more") || strings.Count(err.Error(), "type changed") > maxNotes {
		t.Errorf("refusal %v", err)
	}
}
