package helmrelease

import (
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

// prune deletes the stored revisions of the run's release that tell
// nothing any more (prunable), once per revision last.
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
	st := storage.Init(c.Helm.storage(r.t.Name, r.spec.Namespace))
	for _, rel := range prunable(hist, max, swept) {
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
// when the revisions that remain name every object it names, with the
// same keep policy: a failed upgrade tried again with the same spec
// renders the same objects, but one tried after the spec changed may be
// the only record of what it created, and stays until a sweep.
func prunable(hist []*release.Release, max int, swept bool) []*release.Release {
	last, deployed := len(hist)-1, -1
	for i, rel := range hist {
		if rel.Info != nil && rel.Info.Status == release.StatusDeployed {
			deployed = i
		}
	}
	names := make([]map[string]bool, len(hist))
	for i, rel := range hist {
		names[i] = manifestKeys(rel)
	}
	gone := make([]bool, len(hist))
	var out []*release.Release
	for i := 0; i < last && len(hist)-len(out) > max; i++ {
		if i == deployed || (!swept && !covered(names, gone, i)) {
			continue
		}
		gone[i] = true
		out = append(out, hist[i])
	}
	return out
}

// covered reports whether every object revision i names is named, with
// the same keep policy, by a revision other than i not gone. A revision
// with a document that did not parse is never covered.
func covered(names []map[string]bool, gone []bool, i int) bool {
	if names[i] == nil {
		return false
	}
	for key := range names[i] {
		found := false
		for j := range names {
			if j != i && !gone[j] && names[j][key] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// manifestKeys is the set of objects rel names, by group, kind,
// namespace, name and keep policy, or nil when a document did not parse.
func manifestKeys(rel *release.Release) map[string]bool {
	keys := map[string]bool{}
	for _, d := range guard.ManifestDocs(rel.Manifest) {
		if d.Err != nil {
			return nil
		}
		if d.Obj == nil {
			continue
		}
		gvk := d.Obj.GroupVersionKind()
		keys[gvk.Group+"/"+gvk.Kind+"/"+d.Obj.GetNamespace()+"/"+d.Obj.GetName()+"/"+d.Obj.GetAnnotations()[kube.ResourcePolicyAnno]] = true
	}
	return keys
}
