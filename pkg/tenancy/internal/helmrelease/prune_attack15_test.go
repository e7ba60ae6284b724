package helmrelease

import (
	"testing"

	"helm.sh/helm/v3/pkg/release"
)

// Red team 15. Before the sweep, prunable asks gone to delete the
// objects a revision names that no remaining revision names with the
// same group, kind, namespace, name and keep policy (coverKey). That key
// decides what is covered, and also what is deleted: an object the
// deployed and the last revision still name is deleted early when the
// pruned revision names it with another keep policy (a chart version
// that dropped helm.sh/resource-policy: keep from a PersistentVolumeClaim,
// whose failed upgrade patched the live annotation away), or, cluster-
// scoped, with a namespace in its manifest (the API server drops it; a
// chart writing namespace: on a ClusterRole, and a chart version that
// does not): the object is the same, its key is not. What may be
// deleted early is only what no remaining revision names at all.
func TestAttack15PrunedRevisionDeletesNamedObject(t *testing.T) {
	pvc := func(v int, st release.Status, keep bool) *release.Release {
		doc := "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  namespace: a\n"
		if keep {
			doc += "  annotations:\n    helm.sh/resource-policy: keep\n"
		}
		return &release.Release{Version: v, Info: &release.Info{Status: st}, Manifest: doc}
	}
	role := func(v int, st release.Status, ns string) *release.Release {
		doc := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: opctl.t.kv.manager\n"
		if ns != "" {
			doc += "  namespace: " + ns + "\n"
		}
		return &release.Release{Version: v, Info: &release.Info{Status: st}, Manifest: doc}
	}
	tests := []struct {
		name string
		hist []*release.Release
	}{
		{name: "the deployed revision's kept PersistentVolumeClaim, named without keep by a failed try",
			hist: []*release.Release{pvc(1, release.StatusDeployed, true), pvc(2, release.StatusSuperseded, false), pvc(3, release.StatusFailed, true)}},
		{name: "the deployed revision's ClusterRole, named with a namespace by a failed try",
			hist: []*release.Release{role(1, release.StatusDeployed, ""), role(2, release.StatusSuperseded, "a"), role(3, release.StatusFailed, "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			gone := func(docs []revisionDoc) bool {
				for _, d := range docs {
					asked = append(asked, d.Obj.GetKind()+" "+d.Obj.GetName())
				}
				return true
			}
			pruned := prunable(tt.hist, 1, false, testIdentity, gone)
			if len(asked) > 0 {
				var got []int
				for _, rel := range pruned {
					got = append(got, rel.Version)
				}
				t.Errorf("deleted early %q to prune revisions %v, while the deployed revision 1 and the last revision 3 name it", asked, got)
			}
		})
	}
}
