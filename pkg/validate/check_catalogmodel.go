package validate

import "github.com/operator-framework/operator-registry/pkg/lib/config"

// CatalogModel (OPC-K000) relays operator-registry's own validation.
var CatalogModel = register(Check{ID: "OPC-K000", Severity: SeverityError, Relayed: true,
	Rationale: "operator-registry's own validation (what opm validate runs) refused the catalog.",
	Hint:      "Follow the message; the catalog must load into a valid model."}, checkCatalogModel)

func checkCatalogModel(c *Check, r *Report, in *catalogInput) {
	if err := config.Validate(in.ctx, in.fsys); err != nil {
		r.relay(c, SeverityError, oneLine(canonicalTree(err.Error())), "", "operator-registry/config.Validate")
	}
}
