package helmrelease

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// revision is a stored revision v with status st naming Services names
// (a name "keep:x" is Service x with helm.sh/resource-policy: keep).
func revision(v int, st release.Status, names ...string) *release.Release {
	var docs []string
	for _, n := range names {
		doc := "apiVersion: v1\nkind: Service\nmetadata:\n  name: " + strconv.Quote(strings.TrimPrefix(n, "keep:")) + "\n  namespace: a\n"
		if strings.HasPrefix(n, "keep:") {
			doc += "  annotations:\n    helm.sh/resource-policy: keep\n"
		}
		docs = append(docs, doc)
	}
	return &release.Release{Version: v, Info: &release.Info{Status: st}, Manifest: strings.Join(docs, "---\n")}
}

func TestPrunable(t *testing.T) {
	const (
		deployed   = release.StatusDeployed
		failed     = release.StatusFailed
		superseded = release.StatusSuperseded
	)
	tests := []struct {
		name  string
		hist  []*release.Release
		max   int
		swept bool
		// gone is what deleting the objects a revision alone names
		// reports; asked names what was asked for, by name.
		gone  bool
		want  []int
		asked []string
	}{
		{name: "within the limit", max: 3, hist: []*release.Release{revision(1, superseded, "x"), revision(2, superseded, "y"), revision(3, deployed, "z")}},
		{name: "swept: the oldest go, whatever they named", max: 2, swept: true,
			hist: []*release.Release{revision(1, superseded, "x"), revision(2, superseded, "y"), revision(3, superseded, "w"), revision(4, deployed, "z")}, want: []int{1, 2}},
		{name: "unswept: tries of one spec go, the revision only it names stays while its objects do", max: 2,
			hist: []*release.Release{revision(1, deployed, "x"), revision(2, failed, "x", "crb-c"), revision(3, failed, "x", "single"), revision(4, failed, "x", "single"), revision(5, failed, "x", "single")},
			want: []int{3, 4}, asked: []string{"crb-c"}},
		{name: "unswept: a revision goes once what it alone names is gone", max: 2, gone: true,
			hist: []*release.Release{revision(1, deployed, "x"), revision(2, failed, "x", "crb-c"), revision(3, failed, "x", "single"), revision(4, failed, "x", "single"), revision(5, failed, "x", "single")},
			want: []int{2, 3, 4}, asked: []string{"crb-c"}},
		{name: "unswept: tries naming an object for their revision go once it is gone", max: 2, gone: true,
			hist: []*release.Release{revision(1, deployed, "x"), revision(2, failed, "x", "single-2"), revision(3, failed, "x", "single-3"), revision(4, failed, "x", "single-4")},
			want: []int{2, 3}, asked: []string{"single-2", "single-3"}},
		{name: "unswept: what Helm keeps is never deleted early", max: 1, gone: true,
			hist: []*release.Release{revision(1, deployed, "x"), revision(2, failed, "keep:y"), revision(3, failed, "x")}},
		{name: "unswept: the attempt a rollback undoes stays (failedAttempt reads it)", max: 1, gone: true,
			hist: []*release.Release{withValues(revision(1, deployed, "x"), "a"), withValues(revision(2, failed, "x", "crb-c"), "b"), withValues(revision(3, failed, "x"), "a"), withValues(revision(4, failed, "x"), "a")},
			want: []int{3}},
		{name: "unswept: a binding of other subjects is not the same record", max: 1, gone: true,
			hist: []*release.Release{binding(1, deployed, "a"), binding(2, failed, "a", "c"), binding(3, failed, "a")}},
		{name: "unswept: the last deployed revision stays", max: 1,
			hist: []*release.Release{revision(1, superseded, "x"), revision(2, deployed, "x"), revision(3, failed, "x")}, want: []int{1}},
		{name: "unswept: a different keep policy is not the same object", max: 1,
			hist: []*release.Release{revision(1, deployed, "x"), revision(2, failed, "keep:y"), revision(3, failed, "y")}, asked: nil},
		{name: "unswept: a document that did not parse is never covered", max: 1,
			hist: []*release.Release{revision(1, deployed, "x"), {Version: 2, Info: &release.Info{Status: failed}, Manifest: "kind: [\n"}, revision(3, failed, "x")}},
		{name: "unswept: what two revisions name stays in one of them", max: 1,
			hist: []*release.Release{revision(1, deployed, "x"), revision(2, failed, "x", "y"), revision(3, failed, "x", "y"), revision(4, failed, "x")}, want: []int{2}, asked: []string{"y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			var asked []string
			gone := func(docs []revisionDoc) bool {
				if slices.ContainsFunc(docs, func(d revisionDoc) bool { return keptByHelm(d.ManifestDoc) }) {
					return false
				}
				for _, d := range docs {
					asked = append(asked, d.Obj.GetName())
				}
				return tt.gone
			}
			for _, rel := range prunable(tt.hist, tt.max, tt.swept, testIdentity, gone) {
				got = append(got, rel.Version)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("prunable = %v, want %v", got, tt.want)
			}
			if !slices.Equal(asked, tt.asked) {
				t.Errorf("objects deleted early: %q, want %q", asked, tt.asked)
			}
		})
	}
}

// testIdentity is HelmClient.identity with ClusterRoles the only
// cluster-scoped kind.
func testIdentity(d guard.ManifestDoc) string {
	ns := d.Obj.GetNamespace()
	if d.Obj.GetKind() == "ClusterRole" {
		ns = ""
	}
	return d.Obj.GroupVersionKind().Group + "/" + d.Obj.GetKind() + "/" + ns + "/" + d.Obj.GetName()
}

// withValues gives rel chart version 1.0.0 and values {v: v}.
func withValues(rel *release.Release, v string) *release.Release {
	rel.Chart = &chart.Chart{Metadata: &chart.Metadata{Name: "kv", Version: "1.0.0"}}
	rel.Config = map[string]any{"v": v}
	return rel
}

// binding is revision v naming ClusterRoleBinding delegate of
// ServiceAccount op of each of namespaces.
func binding(v int, st release.Status, namespaces ...string) *release.Release {
	doc := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: delegate\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: system:auth-delegator\nsubjects:\n"
	for _, ns := range namespaces {
		doc += "- kind: ServiceAccount\n  name: op\n  namespace: " + ns + "\n"
	}
	return &release.Release{Version: v, Info: &release.Info{Status: st}, Manifest: doc}
}
