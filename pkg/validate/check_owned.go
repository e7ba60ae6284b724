package validate

import (
	"fmt"
	"strings"
)

// OwnedCRDDescriptors (OPC-B002) wants resources and descriptors on owned CRDs.
var OwnedCRDDescriptors = register(Check{ID: "OPC-B002", Severity: SeverityWarning, Relayed: false,
	Rationale: "Owned CRDs in the CSV need the resources they create and spec/status descriptors, so consoles and tools can show them.",
	Hint:      "List the operand kinds (opctl.yaml operands composition) and describe spec and status fields."}, checkOwned)

func checkOwned(c *Check, r *Report, in *bundleInput) {
	csv := in.b.CSV
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
			r.add(c, fmt.Sprintf("owned CRD %s %s has no %s", o.Name, o.Version, strings.Join(missing, ", ")), in.csvFile, "ClusterServiceVersion/"+csv.Name)
		}
	}
}
