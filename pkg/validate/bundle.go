package validate

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/api/pkg/validation"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"opctl.dev/opctl/internal/crschema"
	"opctl.dev/opctl/pkg/packaging"
)

// Suites select which checks run.
const (
	// SuiteDefault: opctl's checks and the operator-framework default
	// validators (CSV, CRD, Bundle, GoodPractices, AlphaDeprecatedAPIs,
	// Object), plus the grades.
	SuiteDefault = "default"
	// SuiteOperatorHub adds OperatorHubV2, StandardCapabilities and
	// StandardCategories.
	SuiteOperatorHub = "operatorhub"
	// SuiteMaturity reports only the Capability Level and maturity grades.
	SuiteMaturity = "maturity"
	// SuiteAll runs everything.
	SuiteAll = "all"
)

// Options tune the checks.
type Options struct {
	// K8sVersion is the Kubernetes version to check deprecated APIs against.
	K8sVersion string
	// Suite is SuiteDefault (when empty), SuiteOperatorHub, SuiteMaturity
	// or SuiteAll.
	Suite string
}

// namedValidator is an operator-framework validator and its name;
// operatorHub ones run in the operatorhub and all suites only.
type namedValidator struct {
	name        string
	v           interfaces.Validator
	operatorHub bool
}

// frameworkValidators are the operator-framework validators opctl runs on
// bundles. MultipleArchitectures is left out: it shells out to docker.
// StandardCategories warns, not fails, on a category OperatorHub accepts
// that its list lacks (categories.go).
var frameworkValidators = []namedValidator{
	{"ClusterServiceVersionValidator", validation.ClusterServiceVersionValidator, false},
	{"CustomResourceDefinitionValidator", validation.CustomResourceDefinitionValidator, false},
	{"BundleValidator", validation.BundleValidator, false},
	{"OperatorHubV2Validator", validation.OperatorHubV2Validator, true},
	{"StandardCapabilitiesValidator", validation.StandardCapabilitiesValidator, true},
	{"StandardCategoriesValidator", operatorHubCategories(validation.StandardCategoriesValidator), true},
	{"GoodPracticesValidator", validation.GoodPracticesValidator, false},
	{"AlphaDeprecatedAPIsValidator", validation.AlphaDeprecatedAPIsValidator, false},
	{"ObjectValidator", validation.ObjectValidator, false},
}

// MaxBundleBytes is where OPC-B005 starts warning: 80% of the 1 MiB limit.
const MaxBundleBytes = 1 << 20 * 8 / 10

// ValidateBundle checks the registry+v1 bundle in dir. An error means dir
// is not a usable bundle.
func ValidateBundle(dir string, opts Options) (*Report, error) {
	b, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%s is not a loadable OLM bundle: %w", dir, err)
	}
	if b.CSV == nil {
		return nil, fmt.Errorf("%s: no ClusterServiceVersion in manifests/", dir)
	}
	files, err := kindFiles(filepath.Join(dir, "manifests"))
	if err != nil {
		return nil, err
	}
	r := &Report{Path: dir, Kind: "bundle", Findings: []Finding{}}
	csvFile := files["ClusterServiceVersion/"+b.CSV.Name]
	k8s := opts.K8sVersion
	if k8s == "" {
		k8s = "1.36"
	}
	objs := append(b.ObjectsToValidate(), map[string]string{"k8s-version": k8s})
	suite := opts.Suite
	for _, nv := range frameworkValidators {
		if suite == SuiteMaturity || (nv.operatorHub && suite != SuiteOperatorHub && suite != SuiteAll) {
			continue
		}
		for _, res := range nv.v.Validate(objs...) {
			// Some validators walk maps: their order is not stable.
			for _, e := range sortedMessages(res.Errors) {
				r.relay(FrameworkValidators, SeverityError, e, csvFile, "operator-framework/"+nv.name)
			}
			for _, w := range sortedMessages(res.Warnings) {
				r.relay(FrameworkValidators, SeverityWarning, w, csvFile, "operator-framework/"+nv.name)
			}
		}
	}
	if suite != SuiteMaturity {
		r.relay(FrameworkValidators, SeverityInfo, "MultipleArchitecturesValidator skipped: it inspects images with a container engine, which opctl validate does not need offline",
			csvFile, "operator-framework/MultipleArchitecturesValidator")
	}
	crds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range b.V1CRDs {
		crds[crd.Name] = crd
		checkCRDSchema(r, crd, files["CustomResourceDefinition/"+crd.Name])
	}
	checkOwned(r, b.CSV, csvFile)
	checkExamples(r, b.CSV, crds, csvFile)
	checkRelatedImages(r, b.CSV, csvFile)
	r.Grade = gradeBundle(b, files)
	r.Maturity = maturityOf(b, files, !slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Check == CRDSchemas.ID }))
	if g := r.Grade; g.DeclaredLevel > g.Level {
		var missing []string
		for _, c := range g.Criteria {
			if c.Level > g.Level && c.Level <= g.DeclaredLevel && c.Required && c.Status != Met {
				missing = append(missing, c.ID)
			}
		}
		r.add(CapabilityClaim, fmt.Sprintf("capabilities claims Level %d (%s) but the evidence supports Level %d (%s); missing: %s",
			g.DeclaredLevel, g.Declared, g.Level, g.Name, strings.Join(missing, ", ")), csvFile, "ClusterServiceVersion/"+b.CSV.Name)
	}
	if size := treeSize(dir); size > MaxBundleBytes {
		r.add(BundleSize, fmt.Sprintf("bundle is %d bytes, over %d (80%% of 1 MiB)", size, MaxBundleBytes), "", "")
	}
	if suite == SuiteMaturity {
		r.Findings = slices.DeleteFunc(r.Findings, func(f Finding) bool { return f.Check != CapabilityClaim.ID })
	}
	locate(r, dir)
	return r, nil
}

// kindFiles maps "Kind/name" to the file in dir that holds it.
func kindFiles(dir string) (map[string]string, error) {
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		kind, name := headerOf(b)
		out[kind+"/"+name] = filepath.ToSlash(filepath.Join("manifests", e.Name()))
	}
	return out, nil
}

// checkCRDSchema wants a schema on every version and a description on
// every field of spec and status (one level down).
func checkCRDSchema(r *Report, crd *apiextensionsv1.CustomResourceDefinition, file string) {
	obj := "CustomResourceDefinition/" + crd.Name
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			r.add(CRDSchemas, fmt.Sprintf("version %s has no openAPIV3Schema", v.Name), file, obj)
			continue
		}
		internal := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err == nil {
			if s, err := schema.NewStructural(internal.OpenAPIV3Schema); err != nil {
				r.add(CRDSchemas, fmt.Sprintf("version %s: schema is not structural: %v", v.Name, err), file, obj)
			} else if errs := schema.ValidateStructural(field.NewPath("openAPIV3Schema"), s); len(errs) > 0 {
				r.add(CRDSchemas, fmt.Sprintf("version %s: schema is not structural: %v", v.Name, errs.ToAggregate()), file, obj)
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
			r.add(CRDSchemas, fmt.Sprintf("version %s: fields without description: %s", v.Name, strings.Join(missing, ", ")), file, obj)
		}
	}
}

func checkOwned(r *Report, csv *operatorsv1alpha1.ClusterServiceVersion, file string) {
	for _, o := range csv.Spec.CustomResourceDefinitions.Owned {
		var missing []string
		if len(o.Resources) == 0 {
			missing = append(missing, "resources")
		}
		if len(o.SpecDescriptors) == 0 {
			missing = append(missing, "specDescriptors")
		}
		if len(o.StatusDescriptors) == 0 {
			missing = append(missing, "statusDescriptors")
		}
		if len(missing) > 0 {
			r.add(OwnedCRDDescriptors, fmt.Sprintf("owned CRD %s %s has no %s", o.Name, o.Version, strings.Join(missing, ", ")), file, "ClusterServiceVersion/"+csv.Name)
		}
	}
}

// checkExamples validates every alm-examples entry against its CRD's
// schema as the API server checks a create (crschema).
func checkExamples(r *Report, csv *operatorsv1alpha1.ClusterServiceVersion, crds map[string]*apiextensionsv1.CustomResourceDefinition, file string) {
	raw := csv.Annotations["alm-examples"]
	if raw == "" {
		return
	}
	obj := "ClusterServiceVersion/" + csv.Name
	var examples []map[string]any
	if err := json.Unmarshal([]byte(raw), &examples); err != nil {
		r.add(ALMExamples, "alm-examples is not a JSON list of objects: "+err.Error(), file, obj)
		return
	}
	for i, ex := range examples {
		apiVersion, _ := ex["apiVersion"].(string)
		kind, _ := ex["kind"].(string)
		group, version, _ := strings.Cut(apiVersion, "/")
		crd := findCRD(crds, group, kind)
		if crd == nil {
			r.add(ALMExamples, fmt.Sprintf("alm-examples[%d] is a %s %s, but the bundle has no CRD for it", i, apiVersion, kind), file, obj)
			continue
		}
		errs, err := crschema.Validate(crd, version, ex)
		if err != nil {
			r.add(ALMExamples, fmt.Sprintf("alm-examples[%d] (%s): %v", i, kind, err), file, obj)
			continue
		}
		if len(errs) > 0 {
			r.add(ALMExamples, fmt.Sprintf("alm-examples[%d] (%s) is invalid: %v", i, kind, errs.ToAggregate()), file, obj)
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

// unlistedImages returns what the CSV's deployments run without listing
// it in spec.relatedImages: container images (as "deployment/container
// image") and operand images (RELATED_IMAGE_* and *_IMAGE values,
// --*image*= flags).
func unlistedImages(csv *operatorsv1alpha1.ClusterServiceVersion) (containers, env []string) {
	listed := map[string]bool{}
	for _, ri := range csv.Spec.RelatedImages {
		listed[ri.Image] = true
	}
	for _, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		spec := d.Spec.Template.Spec
		for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
			if !listed[c.Image] {
				containers = append(containers, fmt.Sprintf("deployment %s container %s runs %s", d.Name, c.Name, c.Image))
			}
			for _, img := range packaging.OperandImages(c) {
				if listed[img.Image] {
					continue
				}
				if img.Env != "" {
					env = append(env, img.Env+"="+img.Image)
				} else {
					env = append(env, img.Flag+img.Image)
				}
			}
		}
	}
	return containers, env
}

// checkRelatedImages wants every deployment image in spec.relatedImages:
// containers, and the operand images the manager is given.
func checkRelatedImages(r *Report, csv *operatorsv1alpha1.ClusterServiceVersion, file string) {
	containers, operands := unlistedImages(csv)
	for _, c := range containers {
		r.add(RelatedImages, c+", which spec.relatedImages does not list", file, "ClusterServiceVersion/"+csv.Name)
	}
	for _, o := range operands {
		r.add(RelatedImages, "operand image "+o+", which spec.relatedImages does not list", file, "ClusterServiceVersion/"+csv.Name)
	}
}

func treeSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// sortedMessages are the messages of errs, sorted, so that a report does
// not depend on a validator's map order.
func sortedMessages[E error](errs []E) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	slices.Sort(out)
	return out
}
