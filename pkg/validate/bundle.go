package validate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/operator-framework/api/pkg/manifests"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
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

// bundleInput is what bundle checks read.
type bundleInput struct {
	// dir holds the bundle; files maps "Kind/name" to its file under dir.
	dir   string
	b     *manifests.Bundle
	files map[string]string
	// csvFile is the CSV's file; crds are the bundle's CRDs by name.
	csvFile string
	crds    map[string]*apiextensionsv1.CustomResourceDefinition
	// grade is the bundle's Capability Level.
	grade *Grade
	opts  Options
}

func (*bundleInput) kind() string { return KindBundle }

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
	in := &bundleInput{dir: dir, b: b, files: files, csvFile: files["ClusterServiceVersion/"+b.CSV.Name],
		crds: map[string]*apiextensionsv1.CustomResourceDefinition{}, grade: gradeBundle(b, files), opts: opts}
	for _, crd := range b.V1CRDs {
		in.crds[crd.Name] = crd
	}
	r := &Report{Path: dir, Kind: KindBundle, Findings: []Finding{}, Grade: in.grade}
	runChecks(r, in)
	r.Maturity = maturityOf(b, files, !slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Check == CRDSchemas.ID }))
	if opts.Suite == SuiteMaturity {
		r.Findings = slices.DeleteFunc(r.Findings, func(f Finding) bool {
			c, _ := CheckByID(f.Check)
			return !c.Graded
		})
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
