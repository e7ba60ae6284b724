package tenancy

import (
	"context"
	"fmt"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// reconcile brings the operator's release to its plan through the shared
// release path (releaser.go, internal/helmrelease).
func (h *chartBackend) reconcile(ctx context.Context, p *plan, op operatorPlan, st *tenancyv1.OperatorStatus) error {
	if err := h.releases.reconcileRelease(ctx, p.tenant, *op.release, st, p); err != nil {
		return fmt.Errorf("operator %s: %w", op.spec.Name, err)
	}
	return nil
}
