package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A category OperatorHub's pipeline accepts but operator-framework's list
// lacks is a warning; any other unknown category, or one outside the file
// OPERATOR_BUNDLE_CATEGORIES names, stays an error.
func TestOperatorHubCategories(t *testing.T) {
	for _, tc := range []struct {
		name, categories string
		custom           []string // OPERATOR_BUNDLE_CATEGORIES' list, if set
		want             Severity
	}{
		{name: "pipeline only", categories: "Drivers and plugins", want: SeverityWarning},
		{name: "pipeline only second", categories: "Database, Drivers and plugins", want: SeverityWarning},
		{name: "made up", categories: "Made up", want: SeverityError},
		{name: "made up beside pipeline only", categories: "Drivers and plugins,Made up", want: SeverityError},
		{name: "custom list stands", categories: "Drivers and plugins", custom: []string{"Database"}, want: SeverityError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.custom != nil {
				file := filepath.Join(t.TempDir(), "categories.json")
				if err := os.WriteFile(file, []byte(`{"categories":["`+strings.Join(tc.custom, `","`)+`"]}`), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Setenv(customCategoriesEnv, file)
			}
			dir := copyDir(t, sampleBundle)
			editFile(t, filepath.Join(dir, "manifests", "sample-operator.clusterserviceversion.yaml"),
				"categories: Database", "categories: "+tc.categories)
			r, err := ValidateBundle(dir, Options{Suite: SuiteOperatorHub})
			if err != nil {
				t.Fatal(err)
			}
			worst := Severity("")
			for _, f := range r.Findings {
				if f.Source != "operator-framework/StandardCategoriesValidator" {
					continue
				}
				t.Logf("%s: %s", f.Severity, f.Message)
				if f.Severity.AtLeast(worst) {
					worst = f.Severity
				}
				if f.Severity == SeverityWarning && !strings.Contains(f.Message, "predates OperatorHub's") {
					t.Errorf("the warning does not say the validator's list is stale: %s", f.Message)
				}
			}
			if worst != tc.want {
				t.Errorf("worst StandardCategories finding is %q, want %q", worst, tc.want)
			}
		})
	}
}
