package helmrelease

import (
	"context"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/action"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// releaseRun is one reconcile of one release: what every action needs.
type releaseRun struct {
	ctx  context.Context
	t    *tenancyv1.Tenant
	cfg  *action.Configuration
	spec Spec
	st   *tenancyv1.OperatorStatus
	// labels are set on every object of the release; requeue asks for
	// the next reconcile.
	labels  map[string]string
	requeue func(time.Duration)
	scope   guard.ReleaseScope
	facts   releaseFacts
}

// observe reads the release's records, and the namespaces the tenant is
// leaving that the deployed one names, into the facts.
func (r *releaseRun) observe(timeout time.Duration) error {
	cur, deployed, err := LastAndDeployed(r.cfg, r.spec.Name)
	if err != nil {
		return fmt.Errorf("reading release history: %w", err)
	}
	r.facts = releaseFacts{
		current: cur, deployed: deployed,
		want: r.spec.Install.Metadata.Version, values: r.spec.Values,
		status: r.st, now: time.Now(), timeout: timeout,
		rollbackLeaving: namespacesNamed(deployed, r.scope.Leaving),
	}
	return nil
}
