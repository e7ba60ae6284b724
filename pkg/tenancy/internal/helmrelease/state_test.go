package helmrelease

import (
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

func rev(version int, status release.Status, chartVersion string, values map[string]any) *release.Release {
	return &release.Release{
		Version: version, Config: values,
		Info:  &release.Info{Status: status},
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "kv", Version: chartVersion}},
	}
}

// Every phase, from records, spec and status alone, with no cluster.
func TestReleaseState(t *testing.T) {
	now := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
	v1 := map[string]any{"replicas": 1}
	interruptedRev := rev(3, release.StatusFailed, "0.2.0", v1)
	interruptedRev.Info.Description = interruptedPrefix + " while pending-upgrade: recovered by the tenancy controller"
	started := func(ago time.Duration) *tenancyv1.OperatorStatus {
		return &tenancyv1.OperatorStatus{UpgradeStartTime: &metav1.Time{Time: now.Add(-ago)}}
	}
	cases := []struct {
		name              string
		current, deployed *release.Release
		want              string
		values            map[string]any
		status            *tenancyv1.OperatorStatus
		health            string
		phase             releasePhase
	}{
		{"no release", nil, nil, "0.1.0", v1, &tenancyv1.OperatorStatus{}, "", releaseAbsent},
		{"pending install after a crash", rev(1, release.StatusPendingInstall, "0.1.0", v1), nil, "0.1.0", v1, &tenancyv1.OperatorStatus{}, "", releaseStuckPending},
		{"pending upgrade after a crash", rev(2, release.StatusPendingUpgrade, "0.2.0", v1), rev(1, release.StatusDeployed, "0.1.0", v1), "0.2.0", v1, &tenancyv1.OperatorStatus{}, "", releaseStuckPending},
		{"pending rollback after a crash", rev(3, release.StatusPendingRollback, "0.1.0", v1), rev(1, release.StatusSuperseded, "0.1.0", v1), "0.2.0", v1, &tenancyv1.OperatorStatus{}, "", releaseStuckPending},
		{"failed first install", rev(1, release.StatusFailed, "0.1.0", v1), nil, "0.1.0", v1, &tenancyv1.OperatorStatus{}, "", releaseAbsent},
		{"uninstalled", rev(1, release.StatusUninstalled, "0.1.0", v1), nil, "0.1.0", v1, &tenancyv1.OperatorStatus{}, "", releaseAbsent},
		{"failed upgrade", rev(2, release.StatusFailed, "0.2.0", v1), rev(1, release.StatusDeployed, "0.1.0", v1), "0.2.0", v1, &tenancyv1.OperatorStatus{}, "", releaseFailed},
		{"interrupted upgrade is run again", interruptedRev, rev(2, release.StatusDeployed, "0.1.0", v1), "0.2.0", v1, &tenancyv1.OperatorStatus{}, "", releaseOutOfSync},
		{"held after rollback", rev(3, release.StatusDeployed, "0.1.0", v1), rev(3, release.StatusDeployed, "0.1.0", v1), "0.2.0", v1, &tenancyv1.OperatorStatus{FailedVersion: "0.2.0"}, "", releaseHeld},
		{"new version", rev(1, release.StatusDeployed, "0.1.0", v1), rev(1, release.StatusDeployed, "0.1.0", v1), "0.2.0", v1, &tenancyv1.OperatorStatus{}, "", releaseOutOfSync},
		{"a version after the failed one", rev(3, release.StatusDeployed, "0.1.0", v1), rev(3, release.StatusDeployed, "0.1.0", v1), "0.3.0", v1, &tenancyv1.OperatorStatus{FailedVersion: "0.2.0"}, "", releaseOutOfSync},
		{"new values", rev(1, release.StatusDeployed, "0.1.0", v1), rev(1, release.StatusDeployed, "0.1.0", v1), "0.1.0", map[string]any{"replicas": 2}, &tenancyv1.OperatorStatus{}, "", releaseOutOfSync},
		{"values equal through JSON", rev(1, release.StatusDeployed, "0.1.0", map[string]any{"replicas": float64(1)}), rev(1, release.StatusDeployed, "0.1.0", map[string]any{"replicas": float64(1)}), "0.1.0", v1, &tenancyv1.OperatorStatus{}, "", releaseInSync},
		{"in sync, health not seen", rev(1, release.StatusDeployed, "0.1.0", v1), rev(1, release.StatusDeployed, "0.1.0", v1), "0.1.0", v1, &tenancyv1.OperatorStatus{}, "", releaseInSync},
		{"ready", rev(1, release.StatusDeployed, "0.1.0", v1), rev(1, release.StatusDeployed, "0.1.0", v1), "0.1.0", v1, started(time.Minute), tenancyv1.HealthReady, releaseReady},
		{"progressing, no start yet", rev(1, release.StatusDeployed, "0.1.0", v1), rev(1, release.StatusDeployed, "0.1.0", v1), "0.1.0", v1, &tenancyv1.OperatorStatus{}, tenancyv1.HealthProgressing, releaseProgressing},
		{"progressing within the timeout", rev(2, release.StatusDeployed, "0.2.0", v1), rev(2, release.StatusDeployed, "0.2.0", v1), "0.2.0", v1, started(4 * time.Minute), tenancyv1.HealthProgressing, releaseProgressing},
		{"timed out", rev(2, release.StatusDeployed, "0.2.0", v1), rev(2, release.StatusDeployed, "0.2.0", v1), "0.2.0", v1, started(5 * time.Minute), tenancyv1.HealthProgressing, releaseTimedOut},
		{"held with the values it failed with", rev(3, release.StatusDeployed, "0.1.0", v1), rev(3, release.StatusDeployed, "0.1.0", v1), "0.1.0", map[string]any{"replicas": 2},
			&tenancyv1.OperatorStatus{FailedVersion: "0.1.0", FailedValues: valuesDigest(map[string]any{"replicas": float64(2)})}, "", releaseHeld},
		{"the failed version with other values", rev(3, release.StatusDeployed, "0.1.0", v1), rev(3, release.StatusDeployed, "0.1.0", v1), "0.1.0", map[string]any{"replicas": 3},
			&tenancyv1.OperatorStatus{FailedVersion: "0.1.0", FailedValues: valuesDigest(map[string]any{"replicas": 2})}, "", releaseOutOfSync},
		{"held ignores health", rev(3, release.StatusDeployed, "0.1.0", v1), rev(3, release.StatusDeployed, "0.1.0", v1), "0.2.0", v1, &tenancyv1.OperatorStatus{FailedVersion: "0.2.0"}, tenancyv1.HealthReady, releaseHeld},
	}
	seen := map[releasePhase]bool{}
	for _, tc := range cases {
		got := releaseState(releaseFacts{current: tc.current, deployed: tc.deployed, want: tc.want, values: tc.values, status: tc.status, health: tc.health, now: now, timeout: 5 * time.Minute})
		if got != tc.phase {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.phase)
		}
		seen[got] = true
	}
	// The deployed revision, the target of a rollback, names objects in
	// namespace b, which the tenant is leaving.
	leaving := []struct {
		name              string
		current, deployed *release.Release
		want              string
		phase             releasePhase
	}{
		{"failed upgrade, no way back: upgrade again", rev(2, release.StatusFailed, "0.2.0", v1), rev(1, release.StatusDeployed, "0.1.0", v1), "0.2.0", releaseFailedLeaving},
		{"failed upgrade, no way back, the spec moved on: upgrade again", rev(2, release.StatusFailed, "0.2.0", v1), rev(1, release.StatusDeployed, "0.1.0", v1), "0.3.0", releaseFailedLeaving},
		{"interrupted upgrade, no way back: run again", interruptedRev, rev(2, release.StatusDeployed, "0.1.0", v1), "0.2.0", releaseOutOfSync},
		{"deployed, the spec narrowed: upgrade", rev(1, release.StatusDeployed, "0.1.0", v1), rev(1, release.StatusDeployed, "0.1.0", v1), "0.2.0", releaseOutOfSync},
		{"pending upgrade after a crash, no way back", rev(2, release.StatusPendingUpgrade, "0.2.0", v1), rev(1, release.StatusDeployed, "0.1.0", v1), "0.2.0", releaseStuckPending},
	}
	for _, tc := range leaving {
		got := releaseState(releaseFacts{current: tc.current, deployed: tc.deployed, want: tc.want, values: v1, status: &tenancyv1.OperatorStatus{}, rollbackLeaving: []string{"b"}, now: now, timeout: 5 * time.Minute})
		if got != tc.phase {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.phase)
		}
		seen[got] = true
	}
	for p := releaseStuckPending; p <= releaseReady; p++ {
		if !seen[p] {
			t.Errorf("no case reaches %s", p)
		}
	}
}

// The transitions a reconcile goes through: each action's outcome, read
// back as records, leads to the next phase.
func TestReleaseTransitions(t *testing.T) {
	now := time.Date(2026, 11, 23, 3, 0, 0, 0, time.UTC)
	v := map[string]any{}
	st := &tenancyv1.OperatorStatus{}
	decide := func(cur, dep *release.Release, want, health string) releasePhase {
		return releaseState(releaseFacts{current: cur, deployed: dep, want: want, values: v, status: st, health: health, now: now, timeout: time.Minute})
	}
	steps := []struct {
		name string
		got  releasePhase
		want releasePhase
	}{
		{"install", decide(nil, nil, "0.1.0", ""), releaseAbsent},
		{"installed, rolling out", decide(rev(1, release.StatusDeployed, "0.1.0", v), rev(1, release.StatusDeployed, "0.1.0", v), "0.1.0", tenancyv1.HealthProgressing), releaseProgressing},
		{"rolled out", decide(rev(1, release.StatusDeployed, "0.1.0", v), rev(1, release.StatusDeployed, "0.1.0", v), "0.1.0", tenancyv1.HealthReady), releaseReady},
		{"spec moves to 0.2.0", decide(rev(1, release.StatusDeployed, "0.1.0", v), rev(1, release.StatusDeployed, "0.1.0", v), "0.2.0", ""), releaseOutOfSync},
		{"crash mid-upgrade", decide(rev(2, release.StatusPendingUpgrade, "0.2.0", v), rev(1, release.StatusDeployed, "0.1.0", v), "0.2.0", ""), releaseStuckPending},
		{"upgrade failed", decide(rev(2, release.StatusFailed, "0.2.0", v), rev(1, release.StatusDeployed, "0.1.0", v), "0.2.0", ""), releaseFailed},
	}
	for _, s := range steps {
		if s.got != s.want {
			t.Errorf("%s: %s, want %s", s.name, s.got, s.want)
		}
	}
	// Rolled back: 0.2.0 is held until the spec changes.
	st.FailedVersion = "0.2.0"
	if got := decide(rev(3, release.StatusDeployed, "0.1.0", v), rev(3, release.StatusDeployed, "0.1.0", v), "0.2.0", ""); got != releaseHeld {
		t.Errorf("after rollback: %s, want Held", got)
	}
	if got := decide(rev(3, release.StatusDeployed, "0.1.0", v), rev(3, release.StatusDeployed, "0.1.0", v), "0.2.1", ""); got != releaseOutOfSync {
		t.Errorf("spec moves to 0.2.1: %s, want OutOfSync", got)
	}
}

// Every phase that ends a reconcile has its action; the other two are
// handled in the loop.
func TestReleaseActionsCoverThePhases(t *testing.T) {
	for p := releaseStuckPending; p <= releaseReady; p++ {
		_, ok := releaseActions[p]
		if want := p != releaseStuckPending && p != releaseInSync; ok != want {
			t.Errorf("phase %s: action %t, want %t", p, ok, want)
		}
	}
}

// The latest and the latest deployed revision come from one read of the
// history.
func TestLastAndDeployed(t *testing.T) {
	tests := []struct {
		name                string
		records             []*release.Release
		wantCur, wantDeploy int // revisions; 0 is none
	}{
		{"no release", nil, 0, 0},
		{"installed", []*release.Release{rev(1, release.StatusDeployed, "0.1.0", nil)}, 1, 1},
		{"pending install", []*release.Release{rev(1, release.StatusPendingInstall, "0.1.0", nil)}, 1, 0},
		{"failed upgrade", []*release.Release{rev(1, release.StatusSuperseded, "0.1.0", nil), rev(2, release.StatusDeployed, "0.1.0", nil), rev(3, release.StatusFailed, "0.2.0", nil)}, 3, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := memoryHistory(t, tc.records)
			cur, deployed, err := LastAndDeployed(cfg, "kv")
			if err != nil {
				t.Fatal(err)
			}
			if got := versionOf(cur); got != tc.wantCur {
				t.Errorf("latest = %d, want %d", got, tc.wantCur)
			}
			if got := versionOf(deployed); got != tc.wantDeploy {
				t.Errorf("deployed = %d, want %d", got, tc.wantDeploy)
			}
		})
	}
}

func versionOf(r *release.Release) int {
	if r == nil {
		return 0
	}
	return r.Version
}

// memoryHistory is an action configuration whose storage holds records,
// as revisions of release kv in namespace ns.
func memoryHistory(t *testing.T, records []*release.Release) *action.Configuration {
	t.Helper()
	cfg := &action.Configuration{Releases: storage.Init(driver.NewMemory())}
	for _, r := range records {
		r.Name, r.Namespace = "kv", "ns"
		if err := cfg.Releases.Create(r); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}
