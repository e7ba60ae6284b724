package validate

import (
	"opctl.dev/opctl/internal/lazyre"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
)

// operatorHubOnlyCategories are the categories OperatorHub's own pipeline
// accepts (CATEGORIES in redhat-openshift-ecosystem/operator-pipelines,
// operatorcert/static_tests/community/validations.py) that the list of
// operator-framework/api's StandardCategoriesValidator (v0.45.0) lacks.
var operatorHubOnlyCategories = []string{"Drivers and plugins"}

// customCategoriesEnv names the file of categories StandardCategories
// checks against instead of its own list; its verdict then stands.
const customCategoriesEnv = "OPERATOR_BUNDLE_CATEGORIES"

// standardCategoryError is StandardCategoriesValidator's error for a
// category outside its own list; the category is Go-quoted, untrimmed.
var standardCategoryError = lazyre.New(`\) csv\.Metadata\.Annotations\["categories"\] value (".*") is not in the set of standard categories$`)

// operatorHubCategories runs StandardCategoriesValidator and reports a
// category OperatorHub accepts but the validator's list lacks as a
// warning, not an error. Other categories stay errors, and so does every
// verdict against the file OPERATOR_BUNDLE_CATEGORIES names.
func operatorHubCategories(v interfaces.Validator) interfaces.Validator {
	return interfaces.ValidatorFunc(func(objs ...any) []errors.ManifestResult {
		results := v.Validate(objs...)
		if os.Getenv(customCategoriesEnv) != "" {
			return results
		}
		for i := range results {
			res := &results[i]
			res.Errors = slices.DeleteFunc(res.Errors, func(e errors.Error) bool {
				if !operatorHubOnly(e.Detail) {
					return false
				}
				e.Level = errors.LevelWarn
				e.Detail += ": OperatorHub's pipeline accepts it; the operator-framework validator's list predates OperatorHub's"
				res.Warnings = append(res.Warnings, e)
				return true
			})
		}
		return results
	})
}

// operatorHubOnly reports whether detail is StandardCategories' error for
// one of operatorHubOnlyCategories.
func operatorHubOnly(detail string) bool {
	m := standardCategoryError().FindStringSubmatch(detail)
	if m == nil {
		return false
	}
	category, err := strconv.Unquote(m[1])
	return err == nil && slices.Contains(operatorHubOnlyCategories, strings.TrimSpace(category))
}
