package validate

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"opctl.dev/opctl/pkg/tenancy/baseline"
)

// tenant-ready names what the tenancy controller would refuse, against
// the shipped baseline only; the sample fits it.
func TestTenantReady(t *testing.T) {
	golden := "../packaging/testdata/golden/"
	tests := []struct {
		chart string
		// want are the messages expected, each a substring of one
		// finding; none means the chart fits.
		want []string
	}{
		{sampleChart, nil},
		{golden + "watchenv/charts/watchenv", nil},
		{golden + "allns/charts/allns", []string{"the manager reads no watch-namespace setting (opctl.dev/watch-namespace: none)"}},
		{golden + "hostnetwork/charts/hostnetwork", []string{"its pods meet Pod Security privileged, not restricted, which every tenant namespace enforces: host namespaces (hostNetwork=true)"}},
		{golden + "aggregated/charts/agg-operator", []string{"cluster-scoped APIService v1alpha1.metrics.agg.example.com is refused: an APIService serves the API group metrics.agg.example.com to the whole cluster (the API server sends every namespace's requests for it to the Service it names), so a tenant cannot own one: install the operator that serves it once for the cluster; apiService.enabled=false leaves it out"}},
		{"../../internal/cli/testdata/tenancy/metrics-adapter", []string{
			"cluster-scoped APIService v1beta1.external.metrics.example.com is refused: an APIService serves the API group external.metrics.example.com to the whole cluster",
			"RoleBinding leader-election grants its role to ServiceAccount system/controller-manager, which is not the tenant's",
			"ClusterRoleBinding metrics-adapter-auth grants cluster-wide rights to ServiceAccount system/controller-manager, which is not the tenant's",
		}},
		{golden + "workloads/charts/fleet-operator", []string{
			"cluster-scoped Fleet ", "cluster-scoped PriorityClass ",
			"grants cluster-wide get,list,watch,update,patch on fleet.example.com/fleets",
			"its pods meet Pod Security baseline, not restricted",
		}},
	}
	for _, tt := range tests {
		r, err := ValidateChart(tt.chart, Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkTenantFindings(t, tt.chart, r, TenantReady, tt.want)
	}
}

// A chart whose manager's code was not found (watch-namespace unknown)
// is not refused as reading no watch-namespace setting, whatever install
// modes its rules leave (keda and tektoncd's operator in the corpus: the
// controller installs them): the check says what the controller does.
func TestTenantReadyWatchUnknown(t *testing.T) {
	chart := filepath.Join(t.TempDir(), "allns")
	if err := os.CopyFS(chart, os.DirFS("../packaging/testdata/golden/allns/charts/allns")); err != nil {
		t.Fatal(err)
	}
	for watch, refused := range map[string]bool{"none": true, "unknown": false} {
		meta, err := os.ReadFile("../packaging/testdata/golden/allns/charts/allns/Chart.yaml")
		if err != nil {
			t.Fatal(err)
		}
		meta = bytes.Replace(meta, []byte("opctl.dev/watch-namespace: none"), []byte("opctl.dev/watch-namespace: "+watch), 1)
		if err := os.WriteFile(filepath.Join(chart, "Chart.yaml"), meta, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ValidateChart(chart, Options{})
		if err != nil {
			t.Fatal(err)
		}
		said := slices.ContainsFunc(r.Findings, func(f Finding) bool {
			return f.Check == TenantReady.ID && strings.Contains(f.Message, "reads no watch-namespace setting")
		})
		if said != refused {
			t.Errorf("install modes AllNamespaces, watch-namespace %s: refused as reading none %v, want %v", watch, said, refused)
		}
	}
}

func TestBeyondAllowed(t *testing.T) {
	crds := rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get", "list", "watch"}, ResourceNames: []string{"kvstores.kv.opctl.dev"}}
	allowed := append(slices.Clone(baseline.ClusterRules), crds)
	tests := []struct {
		name string
		rule rbacv1.PolicyRule
		want string
	}{
		{"metrics authentication", rbacv1.PolicyRule{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}}, ""},
		{"StorageClasses read", rbacv1.PolicyRule{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"list", "watch"}}, ""},
		{"StorageClasses written", rbacv1.PolicyRule{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get", "create"}}, "create on storage.k8s.io/storageclasses"},
		{"its own CRD by name", rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get"}, ResourceNames: []string{"kvstores.kv.opctl.dev"}}, ""},
		{"every CRD", rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"list"}}, "list on apiextensions.k8s.io/customresourcedefinitions"},
		{"another CRD by name", rbacv1.PolicyRule{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"get"}, ResourceNames: []string{"other.example.com"}}, "get on apiextensions.k8s.io/customresourcedefinitions (other.example.com)"},
		{"nodes", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}}, "get on nodes"},
		{"a wildcard", rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}, "* on */*"},
		{"a URL", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}, "get on /metrics"},
	}
	for _, tt := range tests {
		var said []string
		for _, rule := range beyondAllowed([]rbacv1.PolicyRule{tt.rule}, allowed) {
			said = append(said, describeRule(rule))
		}
		got := strings.Join(said, "; ")
		if got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The bundle's tenant-ready names what the tenancy controller's bundle
// source would refuse, against the shipped baseline only; the sample's
// bundle fits it.
func TestBundleTenantReady(t *testing.T) {
	golden := "../packaging/testdata/golden/"
	tests := []struct {
		bundle string
		want   []string
	}{
		{"../../bundle/sample-operator", nil},
		{"../../bundle/opctl", []string{"opctl.v0.1.0 does not support the OwnNamespace install mode"}},
		{golden + "aggregated/bundle/agg-operator", []string{"spec.apiservicedefinitions.owned asks for APIService v1alpha1.metrics.agg.example.com, which is cluster-scoped"}},
		{golden + "hostnetwork/bundle/hostnetwork", []string{"its pods meet Pod Security privileged, not restricted, which every tenant namespace enforces: host namespaces (hostNetwork=true)"}},
		{golden + "workloads/bundle/fleet-operator", []string{
			"cluster-scoped PriorityClass ",
			"grants cluster-wide get,list,watch,update,patch on fleet.example.com/fleets",
		}},
	}
	for _, tt := range tests {
		r, err := ValidateBundle(tt.bundle, Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkTenantFindings(t, tt.bundle, r, BundleTenantReady, tt.want)
	}
}

// checkTenantFindings checks that c's findings in r each say they judge
// against the shipped baseline, and hold each of want; none when want is
// empty.
func checkTenantFindings(t *testing.T, path string, r *Report, c *Check, want []string) {
	t.Helper()
	var got []string
	for _, f := range r.Findings {
		if f.Check == c.ID {
			got = append(got, f.Message)
			if !strings.HasPrefix(f.Message, againstBaseline) {
				t.Errorf("%s: %q does not say it judges against the shipped baseline", path, f.Message)
			}
		}
	}
	if len(want) == 0 && len(got) > 0 {
		t.Errorf("%s: %q, want none", path, got)
	}
	for _, w := range want {
		if !strings.Contains(strings.Join(got, "\n"), w) {
			t.Errorf("%s: %q, want one holding %q", path, got, w)
		}
	}
}
