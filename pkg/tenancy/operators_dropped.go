package tenancy

import (
	"context"
	"slices"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// removeDropped uninstalls the operators t's status lists that its spec no
// longer names, through the backend that installed each: a release (its
// cluster-scoped grants and records with it) or OLM Subscriptions and CSVs,
// wherever they are recorded. It returns the statuses of those it could not
// remove, which stay in the status so the next reconcile tries again.
func (c *Controller) removeDropped(ctx context.Context, t *tenancyv1.Tenant) ([]tenancyv1.OperatorStatus, error) {
	byBackend := make([][]tenancyv1.OperatorStatus, len(c.backends))
	for _, st := range t.Status.Operators {
		if slices.ContainsFunc(t.Spec.Operators, func(op tenancyv1.OperatorSpec) bool { return op.Name == st.Name }) {
			continue
		}
		for i, b := range c.backends {
			if b.installed(st) {
				byBackend[i] = append(byBackend[i], st)
				break
			}
		}
	}
	var kept []tenancyv1.OperatorStatus
	var firstErr error
	for i, b := range c.backends {
		if len(byBackend[i]) == 0 {
			continue
		}
		var names []string
		for _, st := range byBackend[i] {
			names = append(names, st.Name)
		}
		var err error
		if olm, ok := b.(*olmBackend); ok {
			err = olm.unsubscribeEverywhere(ctx, t, names) // the OperatorGroup serves the spec's operators
		} else {
			err = b.remove(ctx, t, names)
		}
		if err != nil {
			kept = append(kept, byBackend[i]...)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		c.event(t, "Normal", "OperatorRemoved", "removed %v, which spec.operators no longer names", names)
	}
	return kept, firstErr
}
