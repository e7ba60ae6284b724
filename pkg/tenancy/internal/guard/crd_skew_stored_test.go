package guard

import (
	"errors"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// A default added to a field tenants' objects leave unset
// changes what every stored object reads as (the API server defaults on
// read).
func TestSkewDefaultAdded(t *testing.T) {
	live := skewCRD(schemaFrom(t, baseSchema))
	want := skewCRD(schemaFrom(t, baseSchema))
	newer(field("mode", func(f *apiextensionsv1.JSONSchemaProps) {
		f.Default = &apiextensionsv1.JSON{Raw: []byte(`"store"`)}
	}))(want)
	if d, err := CompareCRD(live, want); err == nil {
		t.Errorf("default added on .spec.mode: decision %v, no refusal: every other tenant's object without mode now reads mode=store", d)
	}
}

// Live serves v1beta1 (not storage, not stored) and v1;
// a new definition that drops or stops serving v1beta1 takes its API from
// another tenant's operator that reads it.
func TestSkewServedVersionDropped(t *testing.T) {
	live := skewCRD(schemaFrom(t, baseSchema))
	beta := *live.Spec.Versions[0].DeepCopy()
	beta.Name, beta.Storage = "v1beta1", false
	live.Spec.Versions = append(live.Spec.Versions, beta)
	want := skewCRD(schemaFrom(t, baseSchema))
	newer()(want)
	if d, err := CompareCRD(live, want); err == nil {
		t.Errorf("served version v1beta1 dropped: decision %v, no refusal", d)
	}
	unserved := live.DeepCopy()
	newer()(unserved)
	unserved.Spec.Versions[1].Served = false
	if d, err := CompareCRD(live, unserved); err == nil {
		t.Errorf("served version v1beta1 unserved: decision %v, no refusal", d)
	}
}

// A storage version that is not served prunes every
// tenant's objects on their next write with a schema nothing compared.
func TestSkewUnservedStorageVersion(t *testing.T) {
	live := skewCRD(schemaFrom(t, baseSchema))
	want := skewCRD(schemaFrom(t, baseSchema))
	newer()(want)
	v2 := *want.Spec.Versions[0].DeepCopy()
	v2.Name, v2.Served, v2.Storage = "v2", false, true
	v2.Schema = &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object"}}}}
	want.Spec.Versions[0].Storage = false
	want.Spec.Versions = append(want.Spec.Versions, v2)
	if d, err := CompareCRD(live, want); err == nil {
		t.Errorf("storage moved to unserved v2 that declares no fields: decision %v, no refusal", d)
	}
	if err := ReplaceSkew(live, want); err == nil {
		t.Errorf("ReplaceSkew (OLM) let storage move to unserved v2")
	}
}

// withStoredBeta adds v1beta1 to live: not served, not storage, but in
// status.storedVersions (objects written before storage moved to v1 and
// never migrated), with v1's schema edited by edit.
func withStoredBeta(edit func(*apiextensionsv1.JSONSchemaProps)) func(*apiextensionsv1.CustomResourceDefinition) {
	return func(crd *apiextensionsv1.CustomResourceDefinition) {
		beta := *crd.Spec.Versions[0].DeepCopy()
		beta.Name, beta.Served, beta.Storage = "v1beta1", false, false
		if edit != nil {
			edit(beta.Schema.OpenAPIV3Schema)
		}
		crd.Spec.Versions = append(crd.Spec.Versions, beta)
		crd.Status.StoredVersions = []string{"v1beta1", "v1"}
	}
}

// A version no longer served but still in the live CRD's
// status.storedVersions holds objects the API server prunes and defaults
// with that version's schema when it reads them; a new definition that
// narrows it, or drops it, changes them.
func TestSkewUnservedStoredVersion(t *testing.T) {
	tests := []struct {
		name string
		want func(*apiextensionsv1.CustomResourceDefinition)
		skew string // "" for no refusal
	}{
		{name: "unchanged", want: edits(withStoredBeta(nil), newer())},
		{name: "preserve-unknown-fields dropped", want: edits(withStoredBeta(inSpec(func(s *apiextensionsv1.JSONSchemaProps) {
			c := s.Properties["config"]
			noPreserve(&c)
			s.Properties["config"] = c
		})), newer()), skew: "narrows version v1beta1, which is not served but which objects are still stored in (status.storedVersions; the API server prunes and defaults them on read): .spec.config: x-kubernetes-preserve-unknown-fields removed"},
		{name: "a type narrowed", want: edits(withStoredBeta(inSpec(func(s *apiextensionsv1.JSONSchemaProps) {
			r := s.Properties["ratio"]
			r.Type = "integer"
			s.Properties["ratio"] = r
		})), newer()), skew: ".spec.ratio: type narrowed from number to integer"},
		{name: "a field removed", want: edits(withStoredBeta(inSpec(func(s *apiextensionsv1.JSONSchemaProps) { delete(s.Properties, "mode") })), newer()),
			skew: "removes fields from version v1beta1, which is not served but which objects are still stored in (status.storedVersions; the API server prunes them on read): .spec.mode"},
		{name: "a default added", want: edits(withStoredBeta(inSpec(func(s *apiextensionsv1.JSONSchemaProps) {
			m := s.Properties["mode"]
			m.Default = &apiextensionsv1.JSON{Raw: []byte(`"store"`)}
			s.Properties["mode"] = m
		})), newer()), skew: `.spec.mode: default "store" added`},
		{name: "the version removed", want: newer(), skew: "removes version v1beta1, which objects are still stored in (status.storedVersions)"},
		{name: "a rule only its objects could judge", want: edits(withStoredBeta(inSpec(func(s *apiextensionsv1.JSONSchemaProps) {
			s.XValidations = apiextensionsv1.ValidationRules{{Rule: "self.size <= 5"}}
		})), newer()), skew: "not served, so the controller cannot read the objects stored in it"},
		{name: "served again, narrowed", want: edits(withStoredBeta(inSpec(func(s *apiextensionsv1.JSONSchemaProps) {
			c := s.Properties["config"]
			noPreserve(&c)
			s.Properties["config"] = c
		})), newer(), func(crd *apiextensionsv1.CustomResourceDefinition) { crd.Spec.Versions[1].Served = true }),
			skew: ".spec.config: x-kubernetes-preserve-unknown-fields removed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			live := skewCRD(schemaFrom(t, baseSchema))
			withStoredBeta(nil)(live)
			want := skewCRD(schemaFrom(t, baseSchema))
			tc.want(want)
			want.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
			for name, err := range map[string]error{"CompareCRD": second(CompareCRD(live, want)), "ReplaceSkew": ReplaceSkew(live, want)} {
				var skew *SkewError
				switch {
				case tc.skew == "" && err != nil:
					t.Errorf("%s: unexpected refusal %v", name, err)
				case tc.skew != "" && (!errors.As(err, &skew) || !strings.Contains(err.Error(), tc.skew)):
					t.Errorf("%s: %v, want a SkewError containing %q", name, err, tc.skew)
				}
			}
		})
	}
}

func second[A, B any](_ A, b B) B { return b }

// A field kept whole under
// x-kubernetes-preserve-unknown-fields, now declared with a default
// anywhere in it, changes what every stored object that leaves it unset
// reads; so does a new field with a default under an object stored
// objects hold.
func TestSkewDefaultUnderPreserveUnknown(t *testing.T) {
	def := func(raw string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(raw)} }
	tests := []struct {
		name   string
		want   func(*apiextensionsv1.CustomResourceDefinition)
		skew   string // "" for no refusal
		checks string
	}{
		{name: "declared with a default", want: field("config", func(f *apiextensionsv1.JSONSchemaProps) {
			f.Properties = map[string]apiextensionsv1.JSONSchemaProps{"mode": {Type: "string", Default: def(`"lru"`)}}
		}), skew: `.spec.config.mode: default "lru" added under x-kubernetes-preserve-unknown-fields`},
		{name: "a subtree declared with a default deep in it", want: field("config", func(f *apiextensionsv1.JSONSchemaProps) {
			f.Properties = map[string]apiextensionsv1.JSONSchemaProps{"tuning": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
				"level": {Type: "integer", Default: def(`3`)}}}}
		}), skew: `.spec.config.tuning.level: default 3 added under x-kubernetes-preserve-unknown-fields`},
		{name: "map values declared with a default", want: field("config", func(f *apiextensionsv1.JSONSchemaProps) {
			f.AdditionalProperties = &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
				Properties: map[string]apiextensionsv1.JSONSchemaProps{"ttl": {Type: "string", Default: def(`"1h"`)}}}}
		}), skew: `.spec.config.*.ttl: default "1h" added`},
		{name: "a new field with a default", want: addField("policy", apiextensionsv1.JSONSchemaProps{Type: "string", Default: def(`"Delete"`)}),
			skew: `.spec.policy: new field with default "Delete"`},
		{name: "declared without a default", want: field("config", func(f *apiextensionsv1.JSONSchemaProps) {
			f.Properties = map[string]apiextensionsv1.JSONSchemaProps{"mode": {Type: "string"}}
		}), checks: ".spec.config.mode: kept whole under x-kubernetes-preserve-unknown-fields before, declared now"},
		{name: "a new object whose own fields have defaults", want: addField("tuning", apiextensionsv1.JSONSchemaProps{Type: "object",
			Properties: map[string]apiextensionsv1.JSONSchemaProps{"level": {Type: "integer", Default: def(`3`)}}})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			live, want := skewCRD(schemaFrom(t, baseSchema)), skewCRD(schemaFrom(t, baseSchema))
			tc.want(want)
			_, err := CompareCRD(live, want)
			var skew *SkewError
			switch {
			case tc.skew == "" && err != nil:
				t.Fatalf("CompareCRD: unexpected refusal %v", err)
			case tc.skew != "" && (!errors.As(err, &skew) || !strings.Contains(err.Error(), tc.skew)):
				t.Fatalf("CompareCRD: %v, want a SkewError containing %q", err, tc.skew)
			}
			if tc.checks != "" {
				changes, _ := diffCRD(live, want)
				var checks []string
				for _, c := range changes {
					for _, n := range c.diff.checks {
						checks = append(checks, n.String())
					}
				}
				if got := strings.Join(checks, "; "); !strings.Contains(got, tc.checks) {
					t.Errorf("checks %q, want %q", got, tc.checks)
				}
			}
		})
	}
}
