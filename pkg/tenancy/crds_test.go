package tenancy

import (
	"errors"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func crdWith(stored []string, versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	crd.Name = "widgets.example.com"
	crd.Spec.Versions = versions
	crd.Status.StoredVersions = stored
	return crd
}

func version(name string, storage bool, fields ...string) apiextensionsv1.CustomResourceDefinitionVersion {
	spec := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
	for _, f := range fields {
		spec.Properties[f] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	}
	return apiextensionsv1.CustomResourceDefinitionVersion{Name: name, Served: true, Storage: storage,
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec},
		}}}
}

func TestCompareCRD(t *testing.T) {
	live := crdWith([]string{"v1alpha1"}, version("v1alpha1", true, "size", "mode"))
	tests := []struct {
		name string
		live *apiextensionsv1.CustomResourceDefinition
		want *apiextensionsv1.CustomResourceDefinition
		do   crdDecision
		skew string // substring of a SkewError
	}{
		{"new CRD", nil, live, crdApply, ""},
		{"identical", live, crdWith(nil, version("v1alpha1", true, "size", "mode")), crdKeep, ""},
		{"adds a field", live, crdWith(nil, version("v1alpha1", true, "size", "mode", "extra")), crdApply, ""},
		{"adds a version", live, crdWith(nil, version("v1alpha1", true, "size", "mode"), version("v1beta1", false, "size", "mode")), crdApply, ""},
		{"older: a subset stays as is", live, crdWith(nil, version("v1alpha1", true, "size")), crdKeep, ""},
		{"removes a field while adding one", live, crdWith(nil, version("v1alpha1", true, "size", "extra")), 0, "removes fields from storage version v1alpha1 that tenants' objects may use: .spec.mode"},
		{"drops a stored version", live, crdWith(nil, version("v1beta1", true, "size", "mode")), 0, "stops serving version v1alpha1, which objects are still stored in"},
		{"drops a version nothing stores", crdWith([]string{"v1beta1"}, version("v1alpha1", false, "size"), version("v1beta1", true, "size")),
			crdWith(nil, version("v1beta1", true, "size", "extra")), crdApply, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := compareCRD(tt.live, tt.want)
			var skew *SkewError
			switch {
			case tt.skew != "":
				if !errors.As(err, &skew) || !strings.Contains(err.Error(), tt.skew) {
					t.Fatalf("error %v, want a SkewError containing %q", err, tt.skew)
				}
			case err != nil:
				t.Fatalf("unexpected error %v", err)
			case got != tt.do:
				t.Fatalf("decision %v, want %v", got, tt.do)
			}
		})
	}
}
