package helmrelease

import (
	"helm.sh/helm/v3/pkg/release"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// upgradeRelease upgrades to the spec's chart and values; a failed
// upgrade is rolled back at once, unless the deployed revision names
// objects in a namespace the tenant is leaving (upgrade_retry.go).
func (c *Reconciler) upgradeRelease(r *releaseRun) error {
	deployed := r.facts.deployed
	if stop, err := c.refused(r.ctx, r.t, r.st, r.scope, r.facts.current, deployed); stop || err != nil {
		return err
	}
	rel, err := c.timed("upgrade", func() (*release.Release, error) {
		return c.Helm.upgrade(r.ctx, r.cfg, r.spec, guard.RenderGuard{Ctx: r.ctx, Scope: r.scope, Labels: r.labels})
	})
	if c.tampered(r.t, r.st, err) {
		return nil
	}
	if err != nil && len(r.facts.rollbackLeaving) > 0 {
		log.FromContext(r.ctx).Info("upgrade failed, no way back", "release", r.spec.Namespace+"/"+r.spec.Name, "leaving", r.facts.rollbackLeaving, "error", operatorkit.BoundText(err.Error()))
		return c.upgradeFailedLeaving(r, err)
	}
	if err != nil {
		log.FromContext(r.ctx).Info("upgrade failed, rolling back", "release", r.spec.Namespace+"/"+r.spec.Name, "error", operatorkit.BoundText(err.Error()))
		return c.rollback(r.ctx, r.t, r.cfg, r.scope, deployed.Version, r.facts.want, r.st, err.Error())
	}
	c.upgrades.forget(releaseRef(r.t.Name, r.spec.Namespace, r.spec.Name))
	c.event(r.t, "Normal", "Upgraded", "upgraded %s from %s to %s (revision %d)", r.spec.Name, deployed.Chart.Metadata.Version, r.facts.want, rel.Version)
	c.hooksNotRun(r.t, rel)
	r.progressing(rel.Version)
	r.st.FailedVersion, r.st.FailedValues = "", ""
	r.requeue(c.UpgradeTimeout)
	return nil
}
