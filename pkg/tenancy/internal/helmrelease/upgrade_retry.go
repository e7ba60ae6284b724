package helmrelease

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// A failed upgrade whose rollback target, the deployed revision, names
// objects in a namespace the tenant is leaving is not rolled back: the
// platform took that namespace, and a rollback may not apply anything
// there again (guard.ReleaseScope.Leaving). The spec is the way out, so
// the upgrade to it runs again, through the same checks, after a wait
// that doubles with each failure of the same chart and values, from
// upgradeRetryBackoff up to maxUpgradeRetryBackoff. Until it passes, the
// deployed revision's objects stay, and hold the namespace. The waits are
// in memory: a restart or a changed spec tries at once.
const (
	upgradeRetryBackoff    = 30 * time.Second
	maxUpgradeRetryBackoff = 10 * time.Minute
)

// failedUpgrades remembers the last failed upgrade of each release with
// no way back, by releaseRef.
type failedUpgrades struct{ failedRuns }

// wait is how long an upgrade to ch and values must wait, at now.
func (f *failedUpgrades) wait(ref string, ch *chart.Chart, values map[string]any, now time.Time) time.Duration {
	return f.waitFrom(ref, ch, values, now, upgradeRetryBackoff, maxUpgradeRetryBackoff)
}

// retryUpgrade upgrades a release whose last upgrade failed with no way
// back to the spec again, once its wait is over.
func (c *Reconciler) retryUpgrade(r *releaseRun) error {
	ref := releaseRef(r.t.Name, r.spec.Namespace, r.spec.Name)
	if wait := c.upgrades.wait(ref, r.spec.Install, r.spec.Values, r.facts.now); wait > 0 {
		r.requeue(wait) // the status still says why the last one failed
		return nil
	}
	return c.upgradeRelease(r)
}

// upgradeFailedLeaving reports an upgrade that failed with err where a
// rollback may not go, and asks for the next try.
func (c *Reconciler) upgradeFailedLeaving(r *releaseRun, err error) error {
	ref := releaseRef(r.t.Name, r.spec.Namespace, r.spec.Name)
	c.upgrades.failed(ref, r.spec.Install, r.spec.Values, r.facts.now)
	wait := c.upgrades.wait(ref, r.spec.Install, r.spec.Values, r.facts.now)
	st, deployed := r.st, r.facts.deployed
	st.Revision, st.TargetVersion, st.UpgradeStartTime = deployed.Version, r.facts.want, nil
	st.Health, st.Reason = tenancyv1.HealthFailed, tenancyv1.ReasonUpgradeFailed
	// What comes next goes first: Helm's error, which quotes the
	// tenant's objects, may be cut (operatorkit.BoundText).
	st.LastError = fmt.Sprintf("upgrade to %s failed and is not rolled back: revision %d would re-enter namespace %s, which the tenant is leaving; next try at %s (in %s): %v",
		r.facts.want, deployed.Version, strings.Join(r.facts.rollbackLeaving, ", "), r.facts.now.Add(wait).UTC().Format(time.RFC3339), wait, err)
	c.event(r.t, "Warning", tenancyv1.ReasonUpgradeFailed, "%s: %s", r.spec.Name, st.LastError)
	r.requeue(wait)
	return nil
}

// namespacesNamed are those of namespaces in which rel names objects or
// binds accounts (reaches), sorted.
func namespacesNamed(rel *release.Release, namespaces []string) []string {
	if rel == nil || len(namespaces) == 0 {
		return nil
	}
	var named []string
	for _, d := range guard.ManifestDocs(rel.Manifest) {
		if d.Obj == nil {
			continue
		}
		for _, ns := range reaches(d) {
			if slices.Contains(namespaces, ns) {
				named = append(named, ns)
			}
		}
	}
	slices.Sort(named)
	return slices.Compact(named)
}
