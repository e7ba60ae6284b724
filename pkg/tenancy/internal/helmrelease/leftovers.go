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
// a namespace the tenant keeps, as Helm's upgrade reads it) and those of
// kinds the API server no longer serves (none can exist).
func (h *HelmClient) deleteLeftovers(cfg *action.Configuration, name string, last *release.Release, earlier []*release.Release) error {
	if len(earlier) == 0 {
		return nil
	}
	key := func(d guard.ManifestDoc) string {
		gvk := d.Obj.GroupVersionKind()
		return gvk.Group + "/" + gvk.Kind + "/" + d.Obj.GetNamespace() + "/" + d.Obj.GetName()
	}
	kept := map[string]bool{}
	for _, d := range guard.ManifestDocs(last.Manifest) {
		if d.Obj != nil {
			kept[key(d)] = true
		}
	}
	k, ok := cfg.KubeClient.(*releaseKube)
	if !ok {
		return fmt.Errorf("unexpected Kubernetes client %T", cfg.KubeClient)
	}
	var objs kube.ResourceList
	for _, rel := range earlier {
		for _, d := range guard.ManifestDocs(rel.Manifest) {
			if d.Obj == nil || kept[key(d)] || d.Obj.GetAnnotations()[kube.ResourcePolicyAnno] == kube.KeepPolicy {
				continue
			}
			kept[key(d)] = true
			y, err := yaml.Marshal(d.Obj.Object)
			if err != nil {
				return err
			}
			built, err := k.Build(strings.NewReader(string(y)), false)
			if meta.IsNoMatchError(err) {
				continue
			}
			if err != nil {
				return fmt.Errorf("reading %s %s that revision %d names: %w", d.Obj.GetKind(), d.Obj.GetName(), rel.Version, err)
			}
			objs = append(objs, built...)
		}
	}
	if len(objs) == 0 {
		return nil
	}
	k.release, k.keepLive = name, true
	defer func() { k.release, k.keepLive = "", false }()
	if _, errs := k.Delete(objs); len(errs) > 0 {
		return fmt.Errorf("deleting the objects earlier revisions left: %w", errors.Join(errs...))
	}
	return nil
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
