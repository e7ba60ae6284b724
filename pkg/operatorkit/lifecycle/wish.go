package lifecycle

import (
	"fmt"
	"slices"
	"strings"
)

// Phases lists every phase of the graph: the initial one first, then in
// the order the transitions name them.
func (m *Machine) Phases() []Phase {
	out := []Phase{m.initial}
	for _, t := range m.edges {
		for _, p := range []Phase{t.From, t.To} {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// WishTargets lists the wishable phases a wish may change to from the
// wish from: those the graph reaches from it through phases no one may
// wish for (outcomes such as Ended or Starting), in the order of wishable.
func (m *Machine) WishTargets(from Phase, wishable []Phase) []Phase {
	seen := map[Phase]bool{from: true}
	queue := []Phase{from}
	var reached []Phase
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, to := range m.Allowed(p) {
			if seen[to] {
				continue
			}
			seen[to] = true
			if slices.Contains(wishable, to) {
				reached = append(reached, to)
				continue
			}
			queue = append(queue, to)
		}
	}
	var out []Phase
	for _, w := range wishable {
		if slices.Contains(reached, w) {
			out = append(out, w)
		}
	}
	return out
}

// WishRule is the CEL transition rule of a wished-phase field: a new
// wish is the old one or one of its WishTargets. The API server checks
// it (oldSelf is the previous value), so kubectl refuses a wish the graph
// forbids before any reconcile.
func (m *Machine) WishRule(wishable []Phase) string {
	terms := []string{"self == oldSelf"}
	for _, w := range wishable {
		targets := m.WishTargets(w, wishable)
		if len(targets) == 0 {
			continue
		}
		quoted := make([]string, len(targets))
		for i, t := range targets {
			quoted[i] = fmt.Sprintf("'%s'", t)
		}
		terms = append(terms, fmt.Sprintf("(oldSelf == '%s' && self in [%s])", w, strings.Join(quoted, ", ")))
	}
	return strings.Join(terms, " || ")
}

// WishMessage is the message of the rule: the wishes each wish allows.
func (m *Machine) WishMessage(wishable []Phase) string {
	var parts []string
	for _, w := range wishable {
		targets := m.WishTargets(w, wishable)
		names := "nothing else"
		if len(targets) > 0 {
			s := make([]string, len(targets))
			for i, t := range targets {
				s[i] = string(t)
			}
			names = strings.Join(s, " or ")
		}
		parts = append(parts, fmt.Sprintf("%s may change to %s", w, names))
	}
	return "the lifecycle graph forbids this wish: " + strings.Join(parts, "; ")
}
