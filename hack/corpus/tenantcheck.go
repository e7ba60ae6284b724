package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	validatepkg "opctl.dev/opctl/pkg/validate"
)

// tenantReasons classify what opctl tenancy check refuses of a chart for a
// tenant under the shipped policy, in the order the check column lists
// them: the documented reasons (docs/corpus.md).
var tenantReasons = []struct{ name, says string }{
	{"allns", "reads no watch-namespace setting"},
	{"rules", "grants cluster-wide"},
	{"rules", "which the chart does not define"},
	{"rules", "in the tenant's namespaces, beyond what its owners hold"},
	{"rules", "which the release does not define"},
	{"rules", "which is not the tenant's"},
	{"podsec", "Pod Security"},
	{"object", "is refused"},
}

// tenantCheck runs opctl tenancy check --offline on the main chart (the
// first that is not a CRD chart) and returns "fits" or the reasons it
// would be refused, comma-separated.
func tenantCheck(opctl string, charts []string) (string, error) {
	chart, err := mainChart(charts)
	if err != nil {
		return "", err
	}
	out, err := exec.Command(opctl, "tenancy", "check", "--offline", "-o", "json", chart).Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		err = nil // refused: the verdict says why
	}
	if err != nil {
		return "", fmt.Errorf("opctl tenancy check %s: %w", chart, err)
	}
	var v validatepkg.TenantVerdict
	if err := json.Unmarshal(out, &v); err != nil {
		return "", fmt.Errorf("opctl tenancy check output: %w", err)
	}
	if v.Fits {
		return "fits", nil
	}
	var reasons []string
	for _, f := range v.Refusals {
		why := "other"
		for _, r := range tenantReasons {
			if strings.Contains(f.Message, r.says) {
				why = r.name
				break
			}
		}
		if f.Reason == tenancyv1.ReasonConversionWebhook {
			why = "crd" // as the live column names it
		}
		if !slices.Contains(reasons, why) {
			reasons = append(reasons, why)
		}
	}
	slices.Sort(reasons)
	return strings.Join(reasons, ","), nil
}
