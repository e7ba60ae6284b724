package helmrelease

import (
	"slices"

	"helm.sh/helm/v3/pkg/kube"
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
	for _, rel := range prunable(hist, max, swept, gone) {
		if _, err := st.Delete(rel.Name, rel.Version); err != nil {
			log.FromContext(r.ctx).Info("pruning release history", "release", r.spec.Namespace+"/"+r.spec.Name, "revision", rel.Version, "error", operatorkit.BoundText(err.Error()))
			return
		}
	}
	c.pruned.mark(r.t.Name, r.spec.Namespace, r.spec.Name, at)
}

// prunable returns the revisions of hist (oldest first) to delete so that
// at most max remain, oldest first, never the last revision nor the last
// deployed one. Once the last revision is deployed and swept, earlier
// revisions left nothing and any may go. Until then a revision goes only
// when every object it names is named by a remaining revision with the
// same keep policy (a retry of the same spec renders the same objects),
// or gone reports the others deleted: those the sweep would delete once a
// revision deploys (an object a chart names for .Release.Revision, new at
// every try; what a failed upgrade made for a namespace the spec dropped
// since). A revision with a document that did not parse never goes.
func prunable(hist []*release.Release, max int, swept bool, gone func([]revisionDoc) bool) []*release.Release {
	last, deployed := len(hist)-1, -1
	for i, rel := range hist {
		if rel.Info != nil && rel.Info.Status == release.StatusDeployed {
			deployed = i
		}
	}
	names := make([]map[string]bool, len(hist))
	for i, rel := range hist {
		names[i] = coverKeys(rel)
	}
	removed := make([]bool, len(hist))
	var out []*release.Release
	for i := 0; i < last && len(hist)-len(out) > max; i++ {
		if i == deployed {
			continue
		}
		if !swept {
			if names[i] == nil {
				continue
			}
			if alone := namedAlone(hist[i], names, removed, i); len(alone) > 0 && !gone(alone) {
				continue
			}
		}
		removed[i] = true
		out = append(out, hist[i])
	}
	return out
}

// namedAlone are the objects revision i of hist names that no revision
// other than i and not removed names with the same keep policy.
func namedAlone(rel *release.Release, names []map[string]bool, removed []bool, i int) []revisionDoc {
	var alone []revisionDoc
	for _, d := range guard.ManifestDocs(rel.Manifest) {
		if d.Obj == nil {
			continue
		}
		key := coverKey(d)
		named := false
		for j := range names {
			if j != i && !removed[j] && names[j][key] {
				named = true
				break
			}
		}
		if !named {
			alone = append(alone, revisionDoc{d, rel.Version})
		}
	}
	return alone
}

// objectKey names the object d is: group, kind, namespace and name.
func objectKey(d guard.ManifestDoc) string {
	gvk := d.Obj.GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + "/" + d.Obj.GetNamespace() + "/" + d.Obj.GetName()
}

// coverKey is objectKey with the keep policy d says.
func coverKey(d guard.ManifestDoc) string {
	return objectKey(d) + "/" + d.Obj.GetAnnotations()[kube.ResourcePolicyAnno]
}

// objectKeys is the set of objectKeys of what rel names.
func objectKeys(rel *release.Release) map[string]bool {
	keys := map[string]bool{}
	for _, d := range guard.ManifestDocs(rel.Manifest) {
		if d.Obj != nil {
			keys[objectKey(d)] = true
		}
	}
	return keys
}

// coverKeys is the set of coverKeys of what rel names, or nil when a
// document did not parse.
func coverKeys(rel *release.Release) map[string]bool {
	keys := map[string]bool{}
	for _, d := range guard.ManifestDocs(rel.Manifest) {
		if d.Err != nil {
			return nil
		}
		if d.Obj != nil {
			keys[coverKey(d)] = true
		}
	}
	return keys
}
