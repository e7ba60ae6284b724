package validate

import (
	"slices"

	"opctl.dev/opctl/pkg/fbc"
)

// The upgrade-graph checks report what package fbc finds; each reports
// the problems of its kinds.
var (
	// DefaultChannel (OPC-K001) wants a default channel that exists.
	DefaultChannel = register(Check{ID: "OPC-K001", Severity: SeverityError, Relayed: false,
		Rationale: "Every package needs a default channel that exists, or OLM cannot pick a channel for a Subscription without one.",
		Hint:      "Set defaultChannel on the olm.package to one of its channels."}, graphCheck(fbc.DefaultChannelMissing))
	// ChannelHead (OPC-K002) wants one head per channel and no cycle.
	ChannelHead = register(Check{ID: "OPC-K002", Severity: SeverityError, Relayed: false,
		Rationale: "A channel needs exactly one head (the bundle nothing replaces or skips), or upgrades have no target.",
		Hint:      "Make every other bundle of the channel replaced or skipped by a newer one."}, graphCheck(fbc.HeadCount, fbc.Cycle))
	// ReachableBundles (OPC-K003) wants every bundle reachable from its head.
	ReachableBundles = register(Check{ID: "OPC-K003", Severity: SeverityWarning, Relayed: false,
		Rationale: "Every bundle of a channel should be reachable from its head, or installs of it can never upgrade.",
		Hint:      "Add a replaces or skips edge (or an olm.skipRange) to the orphaned bundle."}, graphCheck(fbc.Unreachable))
)

// graphCheck reports the graph problems of kinds.
func graphCheck(kinds ...fbc.Kind) func(*Check, *Report, *catalogInput) {
	return func(c *Check, r *Report, in *catalogInput) {
		for _, p := range in.problems {
			if slices.Contains(kinds, p.Kind) {
				r.add(c, p.Message, "", "olm.package/"+p.pkg)
			}
		}
	}
}
