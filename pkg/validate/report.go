package validate

import "slices"

// Finding is one problem found.
type Finding struct {
	// Check is the ID of the check that found it.
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// File is relative to the validated path; Line is 1-based, 0 when
	// unknown.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Object is "Kind/name" of the object concerned, if any.
	Object string `json:"object,omitempty"`
	// Source names who found it: opctl, helm-lint, or an
	// operator-framework validator.
	Source string `json:"source"`
	// Reason is the tenancy controller's reason for what a tenant-ready
	// finding says it would refuse, when it has one of its own.
	Reason string `json:"reason,omitempty"`
}

// Report is the result of validating one path.
type Report struct {
	Path     string    `json:"path"`
	Kind     string    `json:"kind"`
	Findings []Finding `json:"findings"`
	// Grade is the Capability Level of a bundle.
	Grade *Grade `json:"grade,omitempty"`
	// Maturity grades the maturity-model guidelines a bundle can show.
	Maturity []Guideline `json:"maturity,omitempty"`
}

// Count returns how many findings have exactly severity s.
func (r *Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// Fails reports whether any finding is at least failOn.
func (r *Report) Fails(failOn Severity) bool {
	return slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Severity.AtLeast(failOn) })
}

// add records a finding of c at its severity.
func (r *Report) add(c *Check, message, file, object string) {
	r.Findings = append(r.Findings, Finding{Check: c.ID, Severity: c.Severity, Message: message, File: file, Object: object, Source: "opctl"})
}

// relay records a finding of another tool (source) at the severity it
// gives, under a relayed check.
func (r *Report) relay(c *Check, sev Severity, message, file, source string) {
	if !c.Relayed {
		panic("validate: " + c.ID + " is not a relayed check")
	}
	r.Findings = append(r.Findings, Finding{Check: c.ID, Severity: sev, Message: message, File: file, Source: source})
}
