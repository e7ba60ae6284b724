package validate

import (
	"encoding/json"
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"opctl.dev/opctl/internal/crschema"
)

// ALMExamples (OPC-B003) wants alm-examples valid against their CRDs.
var ALMExamples = register(Check{ID: "OPC-B003", Severity: SeverityError, Relayed: false,
	Rationale: "Every alm-examples entry must be valid against its CRD schema; users copy them.",
	Hint:      "Fix the sample in config/samples or the schema."}, checkExamples)

// checkExamples validates every alm-examples entry against its CRD's
// schema as the API server checks a create (crschema).
func checkExamples(c *Check, r *Report, in *bundleInput) {
	csv, file := in.b.CSV, in.csvFile
	raw := csv.Annotations["alm-examples"]
	if raw == "" {
		return
	}
	obj := "ClusterServiceVersion/" + csv.Name
	var examples []map[string]any
	if err := json.Unmarshal([]byte(raw), &examples); err != nil {
		r.add(c, "alm-examples is not a JSON list of objects: "+err.Error(), file, obj)
		return
	}
	// One compiled schema per CRD version, however many examples use it:
	// compiling is most of the check's cost on large CRDs.
	compiled := map[string]*crschema.Schema{}
	compileErr := map[string]error{}
	for i, ex := range examples {
		apiVersion, _ := ex["apiVersion"].(string)
		kind, _ := ex["kind"].(string)
		group, version, _ := strings.Cut(apiVersion, "/")
		crd := findCRD(in.crds, group, kind)
		if crd == nil {
			r.add(c, fmt.Sprintf("alm-examples[%d] is a %s %s, but the bundle has no CRD for it", i, apiVersion, kind), file, obj)
			continue
		}
		key := crd.Name + "/" + version
		sch, seen := compiled[key]
		if !seen {
			sch, compileErr[key] = crschema.Compile(crd, version)
			compiled[key] = sch
		}
		err := compileErr[key]
		var errs field.ErrorList
		if err == nil {
			errs, err = sch.Validate(ex)
		}
		if err != nil {
			r.add(c, fmt.Sprintf("alm-examples[%d] (%s): %v", i, kind, err), file, obj)
			continue
		}
		if len(errs) > 0 {
			r.add(c, fmt.Sprintf("alm-examples[%d] (%s) is invalid: %v", i, kind, errs.ToAggregate()), file, obj)
		}
	}
}

func findCRD(crds map[string]*apiextensionsv1.CustomResourceDefinition, group, kind string) *apiextensionsv1.CustomResourceDefinition {
	for _, c := range crds {
		if c.Spec.Group == group && c.Spec.Names.Kind == kind {
			return c
		}
	}
	return nil
}
