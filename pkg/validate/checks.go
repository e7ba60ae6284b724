package validate

import (
	"cmp"
	"slices"
)

// Severity of a finding. Errors fail the gate by default.
type Severity string

// Severities, most severe first.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// rank orders severities: higher is more severe.
func (s Severity) rank() int {
	switch s {
	case SeverityError:
		return 2
	case SeverityWarning:
		return 1
	}
	return 0
}

// AtLeast reports whether s is as severe as min.
func (s Severity) AtLeast(min Severity) bool { return s.rank() >= min.rank() }

// Check is one kind of finding, registered with the function that looks
// for it. A check is a package variable made by register, in a file of its
// own (check_*.go); its function reports through the *Check it is given,
// and Validate runs every check of the input's kind, so no code calls a
// check by name.
type Check struct {
	ID        string   `json:"id"`
	Severity  Severity `json:"severity"`
	Rationale string   `json:"rationale"`
	Hint      string   `json:"hint"`
	// Relayed checks pass on another tool's findings at the severity that
	// tool gives (an error, warning or info).
	Relayed bool `json:"-"`
	// Graded checks judge the grades; the maturity suite keeps only their
	// findings.
	Graded bool `json:"-"`
	// Kind is the input the check reads: KindBundle, KindChart or
	// KindCatalog.
	Kind string `json:"-"`
	run  func(c *Check, r *Report, in input)
}

// input is what the checks of one kind read: *bundleInput, *chartInput or
// *catalogInput, made once per validated path.
type input interface {
	// kind is the input's kind; it must not read the receiver.
	kind() string
}

// Checks lists every check opctl runs, ordered by kind, then ID; that is
// the order they run in. docs/checks.md is generated from it.
var Checks []*Check

// register adds a check of the kind In reads to Checks, with the function
// that runs it; an ID used twice is a programming error.
func register[In input](c Check, run func(c *Check, r *Report, in In)) *Check {
	if _, dup := CheckByID(c.ID); dup {
		panic("validate: check " + c.ID + " registered twice")
	}
	var zero In
	c.Kind = zero.kind()
	c.run = func(c *Check, r *Report, in input) { run(c, r, in.(In)) }
	i, _ := slices.BinarySearchFunc(Checks, &c, func(a, b *Check) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ID, b.ID))
	})
	Checks = slices.Insert(Checks, i, &c)
	return &c
}

// runChecks runs every registered check of in's kind, in registry order.
func runChecks(r *Report, in input) {
	for _, c := range Checks {
		if c.Kind == in.kind() {
			c.run(c, r, in)
		}
	}
}

// CheckByID returns the check with id.
func CheckByID(id string) (*Check, bool) {
	i := slices.IndexFunc(Checks, func(c *Check) bool { return c.ID == id })
	if i < 0 {
		return nil, false
	}
	return Checks[i], true
}
