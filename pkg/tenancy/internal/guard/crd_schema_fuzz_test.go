package guard

import (
	"encoding/json"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// FuzzCompareCRD walks schemas a tenant's chart may ship: no panic, a
// schema compared with itself changes nothing, and CompareCRD keeps an
// identical definition. Seeded with the skew cases.
func FuzzCompareCRD(f *testing.F) {
	for _, tc := range skewCases {
		live, want := skewCRD(schemaFrom(f, baseSchema)), skewCRD(schemaFrom(f, baseSchema))
		if tc.live != nil {
			tc.live(live)
		}
		if tc.want != nil {
			tc.want(want)
		}
		a, _ := json.Marshal(live.Spec.Versions[0].Schema.OpenAPIV3Schema)
		b, _ := json.Marshal(want.Spec.Versions[0].Schema.OpenAPIV3Schema)
		f.Add(a, b)
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a)+len(b) > 64<<10 {
			return
		}
		old, new := &apiextensionsv1.JSONSchemaProps{}, &apiextensionsv1.JSONSchemaProps{}
		if json.Unmarshal(a, old) != nil || json.Unmarshal(b, new) != nil {
			return
		}
		if d := diffSchema(old, old); d.refused() || len(d.checks) > 0 {
			t.Fatalf("a schema compared with itself: removed %v, narrowed %v, checks %v", d.removed, d.narrowed, d.checks)
		}
		diffSchema(old, new)
		live, want := skewCRD(old), skewCRD(new)
		if d, err := CompareCRD(live, skewCRD(old.DeepCopy())); err != nil || d != CrdKeep {
			t.Fatalf("CompareCRD of an identical definition: %v, %v", d, err)
		}
		_, _ = CompareCRD(live, want)
		_ = ReplaceSkew(live, want)
	})
}
