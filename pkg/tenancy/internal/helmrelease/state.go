package helmrelease

import (
	"time"

	"helm.sh/helm/v3/pkg/release"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// releasePhase is what one release needs next. releaseState decides it
// from the release's records, its spec and its status alone; the actions
// in release_*.go carry it out.
type releasePhase int

const (
	// releaseStuckPending: the last revision is pending, which in the one
	// active controller only a crash leaves: recover it.
	releaseStuckPending releasePhase = iota
	// releaseAbsent: nothing deployed: install, after removing a revision
	// that failed.
	releaseAbsent
	// releaseFailed: the last upgrade failed after a deployed revision:
	// roll back to it.
	releaseFailed
	// releaseFailedLeaving: the last upgrade failed, and the deployed
	// revision names objects in a namespace the tenant is leaving, where
	// a rollback may not go back: upgrade to the spec again, after a
	// backoff (upgrade_retry.go).
	releaseFailedLeaving
	// releaseHeld: out of sync with a version and values that were
	// rolled back before: report what runs and wait for the spec to
	// change.
	releaseHeld
	// releaseOutOfSync: the deployed chart or values are not the spec's:
	// upgrade.
	releaseOutOfSync
	// releaseInSync: deployed as specified, health not yet observed.
	releaseInSync
	// releaseProgressing: in sync, not ready, within the upgrade timeout.
	releaseProgressing
	// releaseTimedOut: in sync, not ready past the upgrade timeout: roll
	// back to the previous version, or fail a first install.
	releaseTimedOut
	// releaseReady: in sync and every workload rolled out.
	releaseReady
)

var releaseStateNames = [...]string{"StuckPending", "Absent", "Failed", "FailedLeaving", "Held", "OutOfSync", "InSync", "Progressing", "TimedOut", "Ready"}

func (s releasePhase) String() string { return releaseStateNames[s] }

// releaseFacts are everything releaseState reads.
type releaseFacts struct {
	// current is the last revision and deployed the last deployed one;
	// either may be nil.
	current, deployed *release.Release
	// want and values are the spec's chart version and values.
	want   string
	values map[string]any
	status *tenancyv1.OperatorStatus
	// rollbackLeaving are the namespaces the tenant is leaving in which
	// the deployed revision, the target of a rollback, names objects.
	rollbackLeaving []string
	// health is the workloads' health once observed (in sync only).
	health  string
	now     time.Time
	timeout time.Duration
}

// releaseState decides what the release needs next. It is a pure function
// of its facts.
func releaseState(f releaseFacts) releasePhase {
	switch {
	case f.current != nil && f.current.Info.Status.IsPending():
		return releaseStuckPending
	case f.current == nil || f.deployed == nil:
		return releaseAbsent
	case f.current.Info.Status == release.StatusFailed && f.current.Version > f.deployed.Version && !interrupted(f.current):
		// An interrupted upgrade is simply run again.
		if len(f.rollbackLeaving) > 0 {
			return releaseFailedLeaving
		}
		return releaseFailed
	}
	if f.deployed.Chart.Metadata.Version != f.want || !sameValues(f.deployed.Config, f.values) {
		if f.status.FailedVersion == f.want && (f.status.FailedValues == "" || f.status.FailedValues == valuesDigest(f.values)) {
			return releaseHeld
		}
		return releaseOutOfSync
	}
	switch f.health {
	case "":
		return releaseInSync
	case tenancyv1.HealthReady:
		return releaseReady
	}
	if start := f.status.UpgradeStartTime; start != nil && f.now.Sub(start.Time) >= f.timeout {
		return releaseTimedOut
	}
	return releaseProgressing
}
