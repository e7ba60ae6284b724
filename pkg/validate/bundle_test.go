package validate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"sigs.k8s.io/yaml"
)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const sampleBundle = "../../bundle/sample-operator"

// fixtureBundles are every bundle fixture of the repository.
var fixtureBundles = []string{
	sampleBundle,
	"../packaging/testdata/golden/legacy/bundle/legacy-operator",
	"../packaging/testdata/golden/webhook/bundle/hook-operator",
}

func copyDir(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return dst
}

func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// brokenBundle is the sample bundle with an invalid example, an image
// missing from relatedImages and an undocumented field.
func brokenBundle(t *testing.T) string {
	dir := copyDir(t, sampleBundle)
	csv := filepath.Join(dir, "manifests", "sample-operator.clusterserviceversion.yaml")
	editFile(t, csv, `"replicas": 3,`, `"replicas": "three",`)
	editFile(t, csv, "  - image: valkey/valkey:8.1.3\n    name: kvstore\n", "")
	editFile(t, csv, "capabilities: Auto Pilot", "capabilities: Superb")
	crd := filepath.Join(dir, "manifests", "kv.opctl.dev_kvstores.yaml")
	var m map[string]any
	if err := yaml.Unmarshal(readFile(t, crd), &m); err != nil {
		t.Fatal(err)
	}
	versions := m["spec"].(map[string]any)["versions"].([]any)
	spec := versions[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)
	delete(spec["properties"].(map[string]any)["adoptExisting"].(map[string]any), "description")
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(crd, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSampleBundleHasNoErrors(t *testing.T) {
	r, err := ValidateBundle(sampleBundle, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			t.Errorf("%s %s: %s", f.Check, f.Source, f.Message)
		}
	}
}

func TestBrokenBundleFindings(t *testing.T) {
	r, err := ValidateBundle(brokenBundle(t), Options{Suite: SuiteOperatorHub})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"OPC-B003": `alm-examples[1] (KVStore) is invalid`,
		"OPC-B001": "fields without description: spec.adoptExisting",
		"OPC-B000": "capabilities",
		"OPC-B004": "operand image RELATED_IMAGE_KVSTORE=valkey/valkey:8.1.3",
	}
	for id, msg := range want {
		if !slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Check == id && strings.Contains(f.Message, msg) }) {
			t.Errorf("no %s finding containing %q in %v", id, msg, r.Findings)
		}
	}
	for _, f := range r.Findings {
		if f.File == "" || f.Line == 0 {
			t.Errorf("finding without location: %+v", f)
		}
	}
}

// opctl reports exactly the errors operator-framework's validators report
// when run directly, on every fixture (none has a category OperatorHub
// accepts that their list lacks: TestOperatorHubCategories).
func TestAgreementWithOperatorFramework(t *testing.T) {
	dirs := append(slices.Clone(fixtureBundles), brokenBundle(t))
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			b, err := manifests.GetBundleFromDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			reference := validation.DefaultBundleValidators.WithValidators(
				validation.OperatorHubV2Validator, validation.StandardCapabilitiesValidator, validation.StandardCategoriesValidator,
				validation.GoodPracticesValidator, validation.AlphaDeprecatedAPIsValidator, validation.ObjectValidator)
			var want []string
			for _, res := range reference.Validate(append(b.ObjectsToValidate(), map[string]string{"k8s-version": "1.36"})...) {
				for _, e := range res.Errors {
					want = append(want, e.Error())
				}
			}
			r, err := ValidateBundle(dir, Options{Suite: SuiteAll})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range r.Findings {
				if f.Check == "OPC-B000" && f.Severity == SeverityError {
					got = append(got, f.Message)
				}
			}
			slices.Sort(want)
			slices.Sort(got)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("opctl errors:\n%s\noperator-framework errors:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestSuites(t *testing.T) {
	dir := brokenBundle(t)
	count := func(suite, check string, sev Severity) int {
		r, err := ValidateBundle(dir, Options{Suite: suite})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range r.Findings {
			if f.Check == check && f.Severity == sev {
				n++
			}
		}
		return n
	}
	// The invalid capability level is an OperatorHub finding.
	if count(SuiteDefault, "OPC-B000", SeverityError) != 0 || count(SuiteOperatorHub, "OPC-B000", SeverityError) == 0 {
		t.Error("StandardCapabilities should run only in the operatorhub and all suites")
	}
	if count(SuiteMaturity, "OPC-B003", SeverityError) != 0 {
		t.Error("the maturity suite reported a non-grade finding")
	}
	if count(SuiteDefault, "OPC-B000", SeverityInfo) != 1 {
		t.Error("no note that MultipleArchitectures was skipped")
	}
	if _, err := Validate(t.Context(), dir, KindAuto, Options{Suite: "everything"}); err == nil {
		t.Error("an unknown suite was accepted")
	}
}

// An image that is a placeholder of the project's release step (${VAR},
// ko://, or text that is no image reference, like <OPERATOR_IMG>) is named
// as such, a warning, not as an image relatedImages lacks: no list can
// hold it.
func TestPlaceholderImages(t *testing.T) {
	for _, image := range []string{"${REGISTRY}/kvstore-operator:0.1.0", "<OPERATOR_IMG>"} {
		t.Run(image, func(t *testing.T) {
			dir := copyDir(t, sampleBundle)
			csv := filepath.Join(dir, "manifests", "sample-operator.clusterserviceversion.yaml")
			editFile(t, csv, "image: opctl/kvstore-operator:0.1.0", "image: "+image)
			r, err := ValidateBundle(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var b004, b006 []string
			for _, f := range r.Findings {
				switch f.Check {
				case RelatedImages.ID:
					b004 = append(b004, f.Message)
				case PlaceholderImages.ID:
					b006 = append(b006, f.Message)
				}
			}
			if len(b004) != 0 {
				t.Errorf("OPC-B004 findings %q, want none", b004)
			}
			if len(b006) != 1 || !strings.Contains(b006[0], "runs "+image+", a placeholder its project's release step fills") {
				t.Errorf("OPC-B006 findings %q, want the manager's image", b006)
			}
		})
	}
}
