package validate

import (
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// ChartLint (OPC-C000) relays helm lint --strict, and reports renders that fail.
var ChartLint = register(Check{ID: "OPC-C000", Severity: SeverityError, Relayed: true,
	Rationale: "helm lint --strict reported a problem.",
	Hint:      "Follow the lint message."}, checkChartLint)

func checkChartLint(c *Check, r *Report, in *chartInput) {
	for _, m := range lint.All(in.dir, in.standIns, "default", true).Messages {
		if m.Severity <= support.InfoSev {
			continue
		}
		sev := SeverityWarning
		if m.Severity == support.ErrorSev {
			sev = SeverityError
		}
		r.relay(c, sev, m.Err.Error(), m.Path, "helm-lint")
	}
	for _, rd := range in.renders {
		if rd.err != nil {
			r.add(c, "rendering with "+describeValues(rd.vals)+": "+rd.err.Error(), "", "")
		}
	}
}
