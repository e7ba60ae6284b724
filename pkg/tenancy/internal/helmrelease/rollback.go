package helmrelease

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// rollbackFailed goes back from a failed upgrade to the last deployed
// revision. One that names objects in a namespace the tenant is leaving
// is not gone back to (releaseFailedLeaving: upgrade_retry.go).
func (c *Reconciler) rollbackFailed(r *releaseRun) error {
	return c.rollback(r.ctx, r.t, r.cfg, r.scope, r.facts.deployed.Version, r.facts.current.Chart.Metadata.Version, r.st, "the upgrade failed")
}

// timedOutRelease rolls back a release that did not become ready within
// the upgrade timeout, or fails a first install that has nothing to go
// back to.
func (c *Reconciler) timedOutRelease(r *releaseRun) error {
	prev, err := previousDeployment(r.cfg, r.spec.Name, r.facts.deployed.Version)
	if err != nil {
		return err
	}
	if prev == 0 {
		r.st.Health, r.st.Reason = tenancyv1.HealthFailed, tenancyv1.ReasonInstallFailed
		r.st.LastError = fmt.Sprintf("%s %s did not become ready within %s", r.spec.Name, r.facts.want, c.UpgradeTimeout)
		return nil
	}
	return c.rollback(r.ctx, r.t, r.cfg, r.scope, prev, r.facts.want, r.st, fmt.Sprintf("not ready within %s", c.UpgradeTimeout))
}

// rollback returns the release to revision and records version as failed.
// It refuses when the current or the target revision names objects
// outside the tenant.
func (c *Reconciler) rollback(ctx context.Context, t *tenancyv1.Tenant, cfg *action.Configuration, scope guard.ReleaseScope, revision int, version string, st *tenancyv1.OperatorStatus, why string) error {
	name := scope.Release
	target, err := cfg.Releases.Get(name, revision)
	if err != nil {
		return fmt.Errorf("reading revision %d of %s: %w", revision, name, err)
	}
	cur, err := last(cfg, name)
	if err != nil {
		return err
	}
	if stop, err := c.refused(ctx, t, st, scope, cur); stop || err != nil {
		return err
	}
	if stop, err := c.refusedApply(ctx, t, st, scope, target); stop || err != nil {
		return err
	}
	if _, err := c.timed("rollback", func() (*release.Release, error) { return nil, c.Helm.rollback(cfg, name, revision) }); err != nil {
		st.Health, st.Reason, st.LastError = tenancyv1.HealthFailed, tenancyv1.ReasonUpgradeFailed, fmt.Sprintf("rollback to revision %d failed: %v", revision, err)
		return fmt.Errorf("rolling back %s to revision %d: %w", name, revision, err)
	}
	if rel, err := last(cfg, name); err == nil && rel != nil {
		st.Revision = rel.Version
	}
	// What failed: the attempt rolled back from, not a failed rollback
	// (a copy of the target) in between, which would let the same
	// attempt run again at once.
	if attempt, err := failedAttempt(cfg, name, target); err == nil && attempt != nil {
		version = attempt.Chart.Metadata.Version
		st.FailedValues = valuesDigest(attempt.Config)
	} else {
		st.FailedValues = ""
	}
	st.FailedVersion, st.TargetVersion, st.UpgradeStartTime = version, "", nil
	st.LastError = fmt.Sprintf("upgrade to %s rolled back to revision %d: %s", version, revision, why)
	st.Health, st.Reason = tenancyv1.HealthFailed, tenancyv1.ReasonUpgradeFailed
	c.event(t, "Warning", tenancyv1.ReasonUpgradeFailed, "%s: %s", name, st.LastError)
	return nil
}

// failedAttempt is the latest revision after target that differs from it
// in chart version or values: the upgrade a rollback to target undoes,
// past any failed rollback (a copy of target) since; nil when none does.
func failedAttempt(cfg *action.Configuration, name string, target *release.Release) (*release.Release, error) {
	hist, err := cfg.Releases.History(name)
	if err != nil {
		return nil, err
	}
	return attemptAfter(hist, target), nil
}

// previousDeployment is the revision before current that was deployed
// with another chart version, or 0.
func previousDeployment(cfg *action.Configuration, name string, current int) (int, error) {
	hist, err := cfg.Releases.History(name)
	if err != nil {
		return 0, err
	}
	best := 0
	for _, r := range hist {
		if r.Version < current && r.Version > best && (r.Info.Status == release.StatusSuperseded || r.Info.Status == release.StatusDeployed) {
			best = r.Version
		}
	}
	return best, nil
}
