package tenancy

import (
	"context"
	"fmt"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// reconcile installs or upgrades the bundle's release through the shared
// release path, then reports the bundle in st.Bundle.
func (b *bundleBackend) reconcile(ctx context.Context, s *plan, op operatorPlan, st *tenancyv1.OperatorStatus) error {
	src, bp := op.spec.Bundle, op.detail.(*bundlePlan)
	if st.Bundle == nil {
		st.Bundle = &tenancyv1.BundleStatus{}
	}
	st.Chart, st.Bundle.Package, st.Bundle.Channel = src.Package, src.Package, src.Channel
	// Read the catalog again once it may have changed: to follow the
	// channel, or to list what is pending.
	s.requeueAtMost(b.catalogPoll)
	if bp.err != nil {
		st.Health, st.Reason, st.LastError = tenancyv1.HealthProgressing, "", fmt.Sprintf("waiting for the catalog: %v", bp.err)
		return fmt.Errorf("operator %s: %w", op.spec.Name, bp.err)
	}
	st.Bundle.Pending = bp.res.Pending
	if err := b.releases.reconcileRelease(ctx, s.tenant, *op.release, st, s); err != nil {
		return fmt.Errorf("operator %s: %w", op.spec.Name, err)
	}
	if st.ChartVersion == bp.res.Version.String() {
		st.Bundle.Bundle, st.Bundle.Version, st.Bundle.Image = bp.res.Bundle.Name, st.ChartVersion, bp.content.Image
	}
	return nil
}
