package guard

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The red team's: a default added to a field tenants' objects leave unset
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

// The red team's: live serves v1beta1 (not storage, not stored) and v1;
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

// The red team's high: a storage version that is not served prunes every
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
