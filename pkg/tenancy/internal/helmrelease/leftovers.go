package helmrelease

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// deleteLeftovers deletes the objects that the earlier revisions name and
// last does not, as uninstall deletes (releaseKube.deleteOwned: only
// objects marked as the release's, by the UID read), but those Helm keeps
// (helm.sh/resource-policy: keep in the revision, or on a live object in
// a namespace the tenant keeps, as Helm's upgrade reads it, where all it
// reaches is in namespaces the tenant keeps) and those of kinds the API
// server no longer serves (none can exist).
func (h *HelmClient) deleteLeftovers(cfg *action.Configuration, name string, last *release.Release, earlier []*release.Release) error {
	if len(earlier) == 0 {
		return nil
	}
	k, ok := cfg.KubeClient.(*releaseKube)
	if !ok {
		return fmt.Errorf("unexpected Kubernetes client %T", cfg.KubeClient)
	}
	kept := objectKeys(last, h.identity)
	var docs []revisionDoc
	for _, rel := range earlier {
		for _, d := range guard.ManifestDocs(rel.Manifest) {
			if d.Obj == nil || kept[h.identity(d)] || (keptByHelm(d) && k.within(reaches(d))) {
				continue
			}
			kept[h.identity(d)] = true
			docs = append(docs, revisionDoc{d, rel.Version})
		}
	}
	_, err := h.deleteDocs(cfg, name, docs)
	return err
}

// revisionDoc is an object a stored revision names.
type revisionDoc struct {
	guard.ManifestDoc
	version int
}

// deleteDocs deletes the live objects docs name that are the release's,
// but those a live helm.sh/resource-policy: keep keeps in a namespace the
// tenant keeps, and reports whether every one is gone (deleted, absent,
// or of a kind no longer served in any version).
func (h *HelmClient) deleteDocs(cfg *action.Configuration, name string, docs []revisionDoc) (gone bool, err error) {
	k, ok := cfg.KubeClient.(*releaseKube)
	if !ok {
		return false, fmt.Errorf("unexpected Kubernetes client %T", cfg.KubeClient)
	}
	gone = true
	var objs kube.ResourceList
	for _, d := range docs {
		y, err := yaml.Marshal(d.Obj.Object)
		if err != nil {
			return false, err
		}
		built, err := k.Build(strings.NewReader(string(y)), false)
		if meta.IsNoMatchError(err) {
			// Served in another version, the object may still exist.
			if _, merr := h.Mapper.RESTMapping(d.Obj.GroupVersionKind().GroupKind()); merr == nil {
				gone = false
			}
			continue
		}
		if err != nil {
			return false, fmt.Errorf("reading %s %s that revision %d names: %w", d.Obj.GetKind(), d.Obj.GetName(), d.version, err)
		}
		objs = append(objs, built...)
	}
	if len(objs) == 0 {
		return gone, nil
	}
	k.release, k.keepLive = name, true
	defer func() { k.release, k.keepLive = "", false }()
	res, errs := k.Delete(objs)
	if len(errs) > 0 {
		return false, fmt.Errorf("deleting the objects earlier revisions left: %w", errors.Join(errs...))
	}
	return gone && len(res.Deleted) == len(objs), nil
}

// keptByHelm reports whether a revision's object says Helm keeps it.
func keptByHelm(d guard.ManifestDoc) bool {
	return d.Obj.GetAnnotations()[kube.ResourcePolicyAnno] == kube.KeepPolicy
}

// revisionMemo remembers, per release, the last revision a step ran at:
// the sweep of earlier revisions' leftovers (until it ran every stored
// revision may hold a namespace), the pruning of the history.
type revisionMemo struct {
	mu   sync.Mutex
	last map[string]int
}

func sweptKey(tenant, ns, name string) string { return tenant + "/" + ns + "/" + name }

func (s *revisionMemo) done(tenant, ns, name string, version int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last[sweptKey(tenant, ns, name)] == version
}

func (s *revisionMemo) mark(tenant, ns, name string, version int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last == nil {
		s.last = map[string]int{}
	}
	s.last[sweptKey(tenant, ns, name)] = version
}

func (s *revisionMemo) forget(tenant, ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.last, sweptKey(tenant, ns, name))
}
