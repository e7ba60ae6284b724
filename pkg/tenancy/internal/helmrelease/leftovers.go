package helmrelease

import (
	"errors"
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// deleteLeftovers deletes the objects that the earlier revisions name and
// last does not, as uninstall deletes (releaseKube.deleteOwned: only
// objects marked as the release's, by the UID read).
func (h *HelmClient) deleteLeftovers(cfg *action.Configuration, name string, last *release.Release, earlier []*release.Release) error {
	if len(earlier) == 0 {
		return nil
	}
	kept := map[string]bool{}
	for _, d := range guard.ManifestDocs(last.Manifest) {
		if d.Obj != nil {
			kept[d.Obj.GetKind()+"/"+d.Obj.GetNamespace()+"/"+d.Obj.GetName()] = true
		}
	}
	var b strings.Builder
	for _, rel := range earlier {
		for _, d := range guard.ManifestDocs(rel.Manifest) {
			if d.Obj == nil || kept[d.Obj.GetKind()+"/"+d.Obj.GetNamespace()+"/"+d.Obj.GetName()] {
				continue
			}
			kept[d.Obj.GetKind()+"/"+d.Obj.GetNamespace()+"/"+d.Obj.GetName()] = true
			y, err := yaml.Marshal(d.Obj.Object)
			if err != nil {
				return err
			}
			b.WriteString("---\n")
			b.Write(y)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	k, ok := cfg.KubeClient.(*releaseKube)
	if !ok {
		return fmt.Errorf("unexpected Kubernetes client %T", cfg.KubeClient)
	}
	k.release = name
	defer func() { k.release = "" }()
	objs, err := k.Build(strings.NewReader(b.String()), false)
	if err != nil {
		return fmt.Errorf("reading the objects earlier revisions left: %w", err)
	}
	if _, errs := k.Delete(objs); len(errs) > 0 {
		return fmt.Errorf("deleting the objects earlier revisions left: %w", errors.Join(errs...))
	}
	return nil
}
