package lifecycle

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Phase is a state of the application lifecycle.
type Phase string

// The standard phases.
const (
	Starting  Phase = "Starting"
	Running   Phase = "Running"
	Servicing Phase = "Servicing"
	Stopping  Phase = "Stopping"
	Ended     Phase = "Ended"
	Failed    Phase = "Failed"
)

// Facts are what a reconcile observed; guards decide on them.
type Facts struct {
	// Available: the application serves, at whatever version.
	Available bool
	// Progressing: a change (install, upgrade, scaling) is rolling out.
	Progressing bool
	// Stalled: a problem that retrying cannot fix without a spec change.
	Stalled bool
	// Deleting: the object is being deleted.
	Deleting bool
	// Gone: every managed object has been removed or disconnected, or,
	// when Stopping was wished, the application has stopped.
	Gone bool
	// Wished is the phase the user asks for in the spec, if any.
	Wished Phase
}

// Guard reports whether a transition may happen now, and if not, why.
type Guard func(Facts) (ok bool, waitingFor string)

// Transition is an edge of the graph.
type Transition struct {
	From, To Phase
	Guard    Guard
}

// Machine is a lifecycle graph. Build one with New; it is safe for
// concurrent use once built.
type Machine struct {
	initial Phase
	edges   []Transition
}

// New returns a machine starting in initial with the given transitions. It
// rejects duplicate edges and transitions without a guard.
func New(initial Phase, transitions ...Transition) (*Machine, error) {
	seen := map[[2]Phase]bool{}
	for _, t := range transitions {
		if t.Guard == nil {
			return nil, fmt.Errorf("transition %s → %s has no guard", t.From, t.To)
		}
		k := [2]Phase{t.From, t.To}
		if seen[k] {
			return nil, fmt.Errorf("transition %s → %s declared twice", t.From, t.To)
		}
		seen[k] = true
	}
	return &Machine{initial: initial, edges: slices.Clone(transitions)}, nil
}

// Initial is the phase of an object that has none yet.
func (m *Machine) Initial() Phase { return m.initial }

// ErrNotAllowed is returned for a transition the graph does not have.
var ErrNotAllowed = errors.New("transition not allowed")

// RefusedError explains a transition the graph refused.
type RefusedError struct {
	From, To Phase
	Allowed  []Phase
}

func (e *RefusedError) Error() string {
	allowed := "none"
	if len(e.Allowed) > 0 {
		parts := make([]string, len(e.Allowed))
		for i, p := range e.Allowed {
			parts[i] = string(p)
		}
		allowed = strings.Join(parts, ", ")
	}
	return fmt.Sprintf("lifecycle transition %s → %s is not allowed; from %s the graph allows: %s", e.From, e.To, e.From, allowed)
}

// Unwrap makes errors.Is(err, ErrNotAllowed) hold.
func (e *RefusedError) Unwrap() error { return ErrNotAllowed }

// Allowed lists the phases reachable from from in one transition.
func (m *Machine) Allowed(from Phase) []Phase {
	var out []Phase
	for _, t := range m.edges {
		if t.From == from {
			out = append(out, t.To)
		}
	}
	return out
}

// Next returns the phase to move to from the current one: the target of
// the first declared transition whose guard holds, or current itself when
// none does, with what the first transition is waiting for.
func (m *Machine) Next(current Phase, f Facts) (next Phase, waitingFor string) {
	if current == "" {
		current = m.initial
	}
	for _, t := range m.edges {
		if t.From != current {
			continue
		}
		ok, why := t.Guard(f)
		if ok {
			return t.To, ""
		}
		if waitingFor == "" {
			waitingFor = why
		}
	}
	return current, waitingFor
}

// Request asks for a specific transition. It returns a *RefusedError when
// the graph has no such edge, and ok=false with the reason while its guard
// does not hold yet.
func (m *Machine) Request(from, to Phase, f Facts) (ok bool, waitingFor string, err error) {
	if from == "" {
		from = m.initial
	}
	if from == to {
		return true, "", nil
	}
	for _, t := range m.edges {
		if t.From == from && t.To == to {
			if ok, why := t.Guard(f); !ok {
				return false, why, nil
			}
			return true, "", nil
		}
	}
	return false, "", &RefusedError{From: from, To: to, Allowed: m.Allowed(from)}
}
