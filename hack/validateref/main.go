// Command validateref is the yardstick for `opctl validate --suite all` on a
// bundle: it runs the operator-framework validators opctl runs for that
// suite (pkg/validate/check_framework.go), with the same k8s-version, on
// manifests.GetBundleFromDir and prints how many results they returned and
// how many errors and warnings those hold. It runs none of opctl's own
// checks; make bench-validate compares the two whole processes.
//
//	go run ./hack/validateref bundle/sample-operator
package main

import (
	"fmt"
	"os"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: validateref BUNDLE_DIR")
		os.Exit(2)
	}
	b, err := manifests.GetBundleFromDir(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "validateref: load bundle %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	objs := append(b.ObjectsToValidate(), map[string]string{"k8s-version": "1.36"})
	validators := []interfaces.Validator{
		validation.ClusterServiceVersionValidator,
		validation.CustomResourceDefinitionValidator,
		validation.BundleValidator,
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.GoodPracticesValidator,
		validation.AlphaDeprecatedAPIsValidator,
		validation.ObjectValidator,
	}
	results, errs, warns := 0, 0, 0
	for _, v := range validators {
		for _, r := range v.Validate(objs...) {
			results++
			errs += len(r.Errors)
			warns += len(r.Warnings)
		}
	}
	fmt.Printf("results %d errors %d warnings %d\n", results, errs, warns)
}
