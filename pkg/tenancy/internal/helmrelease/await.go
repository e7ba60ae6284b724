package helmrelease

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// awaitRelease waits for an in-sync release to roll out, within the
// upgrade timeout.
func (c *Reconciler) awaitRelease(r *releaseRun) error {
	st := r.st
	st.Health = tenancyv1.HealthProgressing
	if st.UpgradeStartTime == nil {
		st.UpgradeStartTime, st.TargetVersion = &metav1.Time{Time: r.facts.now}, r.facts.want
	}
	if refused := c.replicaFailure(r.ctx, r.spec); refused != "" {
		st.LastError = refused
	}
	r.requeue(c.UpgradeTimeout - r.facts.now.Sub(st.UpgradeStartTime.Time))
	return nil
}

// readyRelease reports a rolled-out release.
func (c *Reconciler) readyRelease(r *releaseRun) error {
	st := r.st
	st.Health = tenancyv1.HealthReady
	st.ChartVersion, st.AppVersion = r.facts.want, r.facts.deployed.Chart.Metadata.AppVersion
	st.TargetVersion, st.UpgradeStartTime = "", nil
	if st.FailedVersion == "" {
		st.LastError, st.Reason = "", ""
	}
	return nil
}

// holdRelease reports what runs while the spec asks for a version that was
// rolled back, until the spec changes.
func (c *Reconciler) holdRelease(r *releaseRun) error {
	st, deployed := r.st, r.facts.deployed
	st.Revision = deployed.Version
	// A held release is not drift corrected, but what runs of it, perhaps
	// an older revision a rollback brought back, sees no more than the
	// tenant's requests.
	if err := c.keepWebhooksNarrowed(r, deployed, r.spec.Namespace); err != nil {
		return err
	}
	if st.Health = c.health(r.ctx, r.spec); st.Health == tenancyv1.HealthReady {
		st.ChartVersion, st.AppVersion = deployed.Chart.Metadata.Version, deployed.Chart.Metadata.AppVersion
	}
	return nil
}
