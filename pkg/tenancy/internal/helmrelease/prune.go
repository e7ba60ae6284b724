package helmrelease

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// Helm prunes a release's history itself past MaxHistory, oldest first,
// whatever a revision named; but Holds, the sweep and Uninstall know what
// a failed upgrade created only from its stored revision. So Helm's
// actions run with no limit and prune deletes what is no longer needed.

// prune deletes stored revisions of the run's release past MaxHistory
// (prunable), once per revision last; before the sweep, deleting first
// the objects only such a revision names (deleteDocs).
func (c *Reconciler) prune(r *releaseRun) {
	cur, max := r.facts.current, c.Helm.maxHistory
	if cur == nil || max <= 0 || cur.Version <= max {
		return
	}
	swept := c.swept.done(r.t.Name, r.spec.Namespace, r.spec.Name, cur.Version)
	// The memo holds the last revision pruned at, negative before its sweep.
	at := cur.Version
	if !swept {
		at = -at
	}
	if c.pruned.done(r.t.Name, r.spec.Namespace, r.spec.Name, at) {
		return
	}
	hist, err := c.history(r.t.Name, r.spec.Namespace, r.spec.Name)
	if err != nil {
		log.FromContext(r.ctx).Info("reading release history to prune", "release", r.spec.Namespace+"/"+r.spec.Name, "error", operatorkit.BoundText(err.Error()))
		return
	}
	gone := func(docs []revisionDoc) bool {
		if slices.ContainsFunc(docs, func(d revisionDoc) bool { return keptByHelm(d.ManifestDoc) }) {
			return false
		}
		ok, err := c.Helm.deleteDocs(r.cfg, r.spec.Name, docs)
		if err != nil {
			log.FromContext(r.ctx).Info("deleting what a pruned revision alone named", "release", r.spec.Namespace+"/"+r.spec.Name, "error", operatorkit.BoundText(err.Error()))
		}
		return ok && err == nil
	}
	st := storage.Init(c.Helm.storage(r.t.Name, r.spec.Namespace))
	for _, rel := range prunable(hist, max, swept, c.Helm.identity, gone) {
		if _, err := st.Delete(rel.Name, rel.Version); err != nil {
			log.FromContext(r.ctx).Info("pruning release history", "release", r.spec.Namespace+"/"+r.spec.Name, "revision", rel.Version, "error", operatorkit.BoundText(err.Error()))
			return
		}
	}
	c.pruned.mark(r.t.Name, r.spec.Namespace, r.spec.Name, at)
}

// prunable returns the revisions of hist (oldest first) to delete so that
// at most max remain, oldest first, never the last revision, the last
// deployed one, nor the attempt a rollback to it would undo (failedAttempt
// reads it). Once the last revision is deployed and swept, earlier
// revisions left nothing and any other may go. Until then a revision goes
// only when every object it names (by identity) is named by a remaining
// revision with the same keep policy, or by none and gone reports those
// deleted, as the sweep would delete them once a revision deploys (an
// object a chart names for .Release.Revision, new at every try; what a
// failed upgrade made for a namespace the spec dropped since). One naming
// an object a remaining revision names with another keep policy or
// reaching other namespaces (a binding of other subjects, which Holds
// reads), or with a document that did not parse, stays.
func prunable(hist []*release.Release, max int, swept bool, identity func(guard.ManifestDoc) string, gone func([]revisionDoc) bool) []*release.Release {
	last, deployed := len(hist)-1, -1
	for i, rel := range hist {
		if rel.Info != nil && rel.Info.Status == release.StatusDeployed {
			deployed = i
		}
	}
	attempt := -1
	if deployed >= 0 {
		if a := attemptAfter(hist, hist[deployed]); a != nil {
			attempt = slices.Index(hist, a)
		}
	}
	docs := make([][]guard.ManifestDoc, len(hist))
	parsed := make([]bool, len(hist))
	for i, rel := range hist {
		docs[i], parsed[i] = objectDocs(rel)
	}
	removed := make([]bool, len(hist))
	var out []*release.Release
	for i := 0; i < last && len(hist)-len(out) > max; i++ {
		if i == deployed || i == attempt {
			continue
		}
		if !swept {
			if !parsed[i] {
				continue
			}
			alone, clash := namedAlone(docs, removed, i, identity)
			for k := range alone {
				alone[k].version = hist[i].Version
			}
			if clash || (len(alone) > 0 && !gone(alone)) {
				continue
			}
		}
		removed[i] = true
		out = append(out, hist[i])
	}
	return out
}

// attemptAfter is failedAttempt over hist: the latest revision after
// target that differs from it in chart version or values.
func attemptAfter(hist []*release.Release, target *release.Release) *release.Release {
	var best *release.Release
	for _, r := range hist {
		if r.Version <= target.Version || (best != nil && r.Version < best.Version) || r.Chart == nil || r.Chart.Metadata == nil || target.Chart == nil || target.Chart.Metadata == nil {
			continue
		}
		if r.Chart.Metadata.Version != target.Chart.Metadata.Version || !sameValues(r.Config, target.Config) {
			best = r
		}
	}
	return best
}

// namedAlone are the objects revision i names that no other revision not
// removed names, by identity; clash is whether one of the others names an
// object of i with another keep policy or reaching other namespaces.
func namedAlone(docs [][]guard.ManifestDoc, removed []bool, i int, identity func(guard.ManifestDoc) string) (alone []revisionDoc, clash bool) {
	for _, d := range docs[i] {
		id, keep, reach := identity(d), keptByHelm(d), reaches(d)
		named := false
		for j := range docs {
			if j == i || removed[j] {
				continue
			}
			for _, o := range docs[j] {
				if identity(o) == id {
					named = true
					// Holds reads where an object reaches: a binding of
					// other subjects is another record.
					clash = clash || keptByHelm(o) != keep || !slices.Equal(reaches(o), reach)
				}
			}
		}
		if !named {
			alone = append(alone, revisionDoc{d, 0})
		}
	}
	return alone, clash
}

// objectDocs are the objects rel names, and whether every document
// parsed.
func objectDocs(rel *release.Release) ([]guard.ManifestDoc, bool) {
	var out []guard.ManifestDoc
	for _, d := range guard.ManifestDocs(rel.Manifest) {
		if d.Err != nil {
			return nil, false
		}
		if d.Obj != nil {
			out = append(out, d)
		}
	}
	return out, true
}

// objectKeys is the set of identities of what rel names.
func objectKeys(rel *release.Release, identity func(guard.ManifestDoc) string) map[string]bool {
	keys := map[string]bool{}
	for _, d := range guard.ManifestDocs(rel.Manifest) {
		if d.Obj != nil {
			keys[identity(d)] = true
		}
	}
	return keys
}

// identity names the object d is: group, kind and name, and the namespace
// of a namespaced kind (the API server drops a cluster-scoped object's,
// which a chart may write); a kind not served keeps its namespace.
func (h *HelmClient) identity(d guard.ManifestDoc) string {
	gvk := d.Obj.GroupVersionKind()
	ns := d.Obj.GetNamespace()
	if m, err := h.Mapper.RESTMapping(gvk.GroupKind()); err == nil && m.Scope.Name() == meta.RESTScopeNameRoot {
		ns = ""
	}
	return gvk.Group + "/" + gvk.Kind + "/" + ns + "/" + d.Obj.GetName()
}
