package helmrelease

import (
	"testing"

	"helm.sh/helm/v3/pkg/release"
)

// The attempt a rollback undoes is the latest revision after the target
// that differs from it, past failed rollbacks (copies of the target), so
// that the same attempt is held rather than run again at once.
func TestFailedAttempt(t *testing.T) {
	deployed := map[string]any{"watchNamespaces": []any{"a"}}
	wider := map[string]any{"watchNamespaces": []any{"a", "b"}}
	tests := []struct {
		name    string
		records []*release.Release
		want    int // revision; 0 is none
	}{
		{"a failed upgrade", []*release.Release{rev(1, release.StatusDeployed, "0.1.0", deployed), rev(2, release.StatusFailed, "0.1.0", wider)}, 2},
		{"a failed rollback after it", []*release.Release{rev(1, release.StatusSuperseded, "0.1.0", deployed), rev(2, release.StatusSuperseded, "0.1.0", wider), rev(3, release.StatusFailed, "0.1.0", deployed)}, 2},
		{"a new chart version, same values", []*release.Release{rev(1, release.StatusSuperseded, "0.1.0", deployed), rev(2, release.StatusSuperseded, "0.2.0", deployed), rev(3, release.StatusFailed, "0.1.0", deployed)}, 2},
		{"not ready after an upgrade", []*release.Release{rev(1, release.StatusSuperseded, "0.1.0", deployed), rev(2, release.StatusDeployed, "0.2.0", wider)}, 2},
		{"nothing after the target", []*release.Release{rev(1, release.StatusDeployed, "0.1.0", deployed)}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := memoryHistory(t, tc.records)
			got, err := failedAttempt(cfg, "kv", tc.records[0])
			if err != nil {
				t.Fatal(err)
			}
			if v := 0; got != nil {
				v = got.Version
				if v != tc.want {
					t.Errorf("attempt revision %d, want %d", v, tc.want)
				}
			} else if tc.want != 0 {
				t.Errorf("no attempt, want revision %d", tc.want)
			}
		})
	}
}
