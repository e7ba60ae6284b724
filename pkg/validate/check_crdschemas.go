package validate

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CRDSchemas (OPC-B001) wants structural, described CRD schemas.
var CRDSchemas = register(Check{ID: "OPC-B001", Severity: SeverityWarning, Relayed: false,
	Rationale: "Every CRD version needs a structural openAPIV3Schema with descriptions, so the API server validates and prunes and users can read what each field means.",
	Hint:      "Generate CRDs with controller-gen and document every field of the Go types."}, checkCRDSchemas)

// checkCRDSchemas wants a schema on every version of every CRD and a
// description on every field of spec and status (one level down).
func checkCRDSchemas(c *Check, r *Report, in *bundleInput) {
	for _, crd := range in.b.V1CRDs {
		checkCRDSchema(c, r, crd, in.files["CustomResourceDefinition/"+crd.Name])
	}
}

func checkCRDSchema(c *Check, r *Report, crd *apiextensionsv1.CustomResourceDefinition, file string) {
	obj := "CustomResourceDefinition/" + crd.Name
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			r.add(c, fmt.Sprintf("version %s has no openAPIV3Schema", v.Name), file, obj)
			continue
		}
		internal := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err == nil {
			if s, err := schema.NewStructural(internal.OpenAPIV3Schema); err != nil {
				r.add(c, fmt.Sprintf("version %s: schema is not structural: %v", v.Name, err), file, obj)
			} else if errs := schema.ValidateStructural(field.NewPath("openAPIV3Schema"), s); len(errs) > 0 {
				r.add(c, fmt.Sprintf("version %s: schema is not structural: %v", v.Name, errs.ToAggregate()), file, obj)
			}
		}
		var missing []string
		for _, top := range []string{"spec", "status"} {
			p, ok := v.Schema.OpenAPIV3Schema.Properties[top]
			if !ok {
				continue
			}
			if p.Description == "" {
				missing = append(missing, top)
			}
			for _, name := range sortedKeys(p.Properties) {
				if p.Properties[name].Description == "" {
					missing = append(missing, top+"."+name)
				}
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			r.add(c, fmt.Sprintf("version %s: fields without description: %s", v.Name, strings.Join(missing, ", ")), file, obj)
		}
	}
}
