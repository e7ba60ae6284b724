package validate

import (
	"slices"

	"github.com/operator-framework/api/pkg/validation"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
)

// FrameworkValidators (OPC-B000) relays the operator-framework validators.
var FrameworkValidators = register(Check{ID: "OPC-B000", Severity: SeverityError, Relayed: true,
	Rationale: "The operator-framework validators (the ones operator-sdk and OperatorHub run) reported a problem.",
	Hint:      "Follow the validator's message; the finding names the validator."}, checkFramework)

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

// checkFramework runs the validators the suite selects on the bundle,
// against opts.K8sVersion for deprecated APIs.
func checkFramework(c *Check, r *Report, in *bundleInput) {
	k8s := in.opts.K8sVersion
	if k8s == "" {
		k8s = "1.36"
	}
	objs := append(in.b.ObjectsToValidate(), map[string]string{"k8s-version": k8s})
	suite := in.opts.Suite
	for _, nv := range frameworkValidators {
		if suite == SuiteMaturity || (nv.operatorHub && suite != SuiteOperatorHub && suite != SuiteAll) {
			continue
		}
		for _, res := range nv.v.Validate(objs...) {
			// Some validators walk maps: their order is not stable.
			for _, e := range sortedMessages(res.Errors) {
				r.relay(c, SeverityError, e, in.csvFile, "operator-framework/"+nv.name)
			}
			for _, w := range sortedMessages(res.Warnings) {
				r.relay(c, SeverityWarning, w, in.csvFile, "operator-framework/"+nv.name)
			}
		}
	}
	if suite != SuiteMaturity {
		r.relay(c, SeverityInfo, "MultipleArchitecturesValidator skipped: it inspects images with a container engine, which opctl validate does not need offline",
			in.csvFile, "operator-framework/MultipleArchitecturesValidator")
	}
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
