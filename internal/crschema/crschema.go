package crschema

import (
	"encoding/json"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks obj, a custom resource of the given version of crd, as
// the API server would on create. obj is not changed. A version without a
// schema, or a schema the API server would not take, is an error.
func Validate(crd *apiextensionsv1.CustomResourceDefinition, version string, obj map[string]any) (field.ErrorList, error) {
	s, err := Compile(crd, version)
	if err != nil {
		return nil, err
	}
	return s.Validate(obj)
}

// Schema is one version's schema of a CRD, made ready to check its custom
// resources: converting, structuring and compiling a large CRD's schema
// costs far more than checking an object against it.
type Schema struct {
	structural *structuralschema.Structural
	validator  apivalidation.SchemaValidator
}

// Compile readies the schema of version of crd. A version without a
// schema, or a schema the API server would not take, is an error.
func Compile(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Schema, error) {
	var schema *apiextensionsv1.CustomResourceValidation
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			schema = v.Schema
		}
	}
	if schema == nil || schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s has no schema for version %q", crd.Name, version)
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(schema, internal, nil); err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s: %w", crd.Name, err)
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s version %s: %w", crd.Name, version, err)
	}
	validator, _, err := apivalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s version %s: %w", crd.Name, version, err)
	}
	return &Schema{structural: s, validator: validator}, nil
}

// Validate checks obj as the API server would on create. obj is not
// changed.
func (s *Schema) Validate(obj map[string]any) (field.ErrorList, error) {
	// A JSON round trip copies obj with the number types the API server
	// decodes (int64, float64), whatever the caller's decoder gave.
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var c map[string]any
	if err := utiljson.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	structuralpruning.Prune(c, s.structural, true)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(c, s.structural)
	structuraldefaulting.Default(c, s.structural)
	return apivalidation.ValidateCustomResource(field.NewPath(""), c, s.validator), nil
}
