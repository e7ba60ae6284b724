package validate

import (
	"fmt"
	"strings"
)

// CapabilityClaim (OPC-G001) wants the capabilities claim backed by evidence.
var CapabilityClaim = register(Check{ID: "OPC-G001", Severity: SeverityWarning, Relayed: false, Graded: true,
	Rationale: "The capabilities annotation claims more than the bundle shows evidence for.",
	Hint:      "Lower the claim, or add what the missing criteria of the claimed level ask for."}, checkCapabilityClaim)

// checkCapabilityClaim compares the declared Capability Level with the
// graded one and names the missing criteria.
func checkCapabilityClaim(c *Check, r *Report, in *bundleInput) {
	g := in.grade
	if g.DeclaredLevel <= g.Level {
		return
	}
	var missing []string
	for _, cr := range g.Criteria {
		if cr.Level > g.Level && cr.Level <= g.DeclaredLevel && cr.Required && cr.Status != Met {
			missing = append(missing, cr.ID)
		}
	}
	r.add(c, fmt.Sprintf("capabilities claims Level %d (%s) but the evidence supports Level %d (%s); missing: %s",
		g.DeclaredLevel, g.Declared, g.Level, g.Name, strings.Join(missing, ", ")), in.csvFile, "ClusterServiceVersion/"+in.b.CSV.Name)
}
