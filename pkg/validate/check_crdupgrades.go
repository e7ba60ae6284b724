package validate

import (
	"strings"

	"helm.sh/helm/v3/pkg/chart"
)

// CRDUpgrades (OPC-C009) wants CRDs that helm upgrade updates.
var CRDUpgrades = register(Check{ID: "OPC-C009", Severity: SeverityWarning, Relayed: false,
	Rationale: "CRDs only in the chart's crds/ directory are never upgraded by helm upgrade.",
	Hint:      "Template them (opctl package --crds templated) or ship a CRD chart."}, checkCRDUpgrades)

func checkCRDUpgrades(c *Check, r *Report, in *chartInput) {
	if crdsOnlyInCRDsDir(in.chart) {
		r.add(c, "the chart's CRDs are only in crds/, which helm upgrade never updates", "crds/", "")
	}
}

// crdsOnlyInCRDsDir reports a chart whose CRDs are only in crds/.
func crdsOnlyInCRDsDir(c *chart.Chart) bool {
	if len(c.CRDObjects()) == 0 {
		return false
	}
	for _, t := range c.Templates {
		if strings.Contains(string(t.Data), "kind: CustomResourceDefinition") {
			return false
		}
	}
	return true
}
