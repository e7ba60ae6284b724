package helmrelease

import (
	"slices"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
)

// TestUpgradeRetryBackoff: an upgrade with no way back waits
// upgradeRetryBackoff after a failure, twice as long after each, up to
// maxUpgradeRetryBackoff; another chart or other values, or a success, do
// not wait; installs keep their own waits.
func TestUpgradeRetryBackoff(t *testing.T) {
	var f failedUpgrades
	testBackoff(t, &f.failedRuns, f.wait, upgradeRetryBackoff, maxUpgradeRetryBackoff)
	var installs failedInstalls
	ch := &chart.Chart{Metadata: &chart.Metadata{Name: "kv", Version: "0.2.0"}}
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	f.failed("t/a/kv", ch, nil, now)
	if w := installs.wait("t/a/kv", ch, nil, now); w != 0 {
		t.Errorf("an install waits %v for a failed upgrade", w)
	}
}

// TestNamespacesNamed: the leaving namespaces a revision names objects
// in, once each and sorted; none for no revision or no leaving namespace.
func TestNamespacesNamed(t *testing.T) {
	rel := &release.Release{Manifest: `---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
  namespace: c
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
  namespace: b
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: op
  namespace: b
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: single-namespace
  namespace: a
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: opctl.t.kv.watch
`}
	tests := []struct {
		name    string
		rel     *release.Release
		leaving []string
		want    []string
	}{
		{"two leaving namespaces named", rel, []string{"d", "c", "b"}, []string{"b", "c"}},
		{"none named", rel, []string{"d"}, nil},
		{"nothing leaving", rel, nil, nil},
		{"no revision", nil, []string{"b"}, nil},
		{"a ClusterRoleBinding of a leaving namespace's account", &release.Release{Manifest: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: opctl.t.kv.delegate-e\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: system:auth-delegator\nsubjects:\n- kind: ServiceAccount\n  name: op\n  namespace: e\n- kind: User\n  name: f\n  namespace: f\n"},
			[]string{"e", "f"}, []string{"e"}},
		{"a RoleBinding of a leaving namespace's accounts by group and user name", &release.Release{Manifest: "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: delegate\n  namespace: a\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: reader\nsubjects:\n- kind: Group\n  name: system:serviceaccounts:g\n- kind: User\n  name: system:serviceaccount:h:op\n- kind: Group\n  name: system:authenticated\n"},
			[]string{"g", "h", "i"}, []string{"g", "h"}},
		{"a webhook configuration narrowed to a leaving namespace, calling another", &release.Release{Manifest: "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: opctl.t.kv.hook\nwebhooks:\n- name: v.example.com\n  clientConfig:\n    service:\n      name: hook\n      namespace: j\n  namespaceSelector:\n    matchExpressions:\n    - key: kubernetes.io/metadata.name\n      operator: In\n      values: [a, k]\n"},
			[]string{"j", "k", "l"}, []string{"j", "k"}},
	}
	for _, tc := range tests {
		if got := namespacesNamed(tc.rel, tc.leaving); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
