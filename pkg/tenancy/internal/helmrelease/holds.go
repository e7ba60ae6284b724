package helmrelease

import (
	"slices"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// Holds reports whether the last revision of release name of t, in ns,
// names objects in any of namespaces: Helm would still delete them there
// at its next upgrade or uninstall, with the actor's rights in them.
func (c *Reconciler) Holds(t *tenancyv1.Tenant, ns, name string, namespaces []string) (bool, error) {
	cfg, err := c.Helm.action(t.Name, ns)
	if err != nil {
		return false, err
	}
	rel, err := last(cfg, name)
	if err != nil || rel == nil {
		return false, err
	}
	for _, d := range guard.ManifestDocs(rel.Manifest) {
		if d.Obj != nil && slices.Contains(namespaces, d.Obj.GetNamespace()) {
			return true, nil
		}
	}
	return false, nil
}

// Recorded reports whether release name of t has a revision in ns.
func (c *Reconciler) Recorded(t *tenancyv1.Tenant, ns, name string) (bool, error) {
	cfg, err := c.Helm.action(t.Name, ns)
	if err != nil {
		return false, err
	}
	rel, err := last(cfg, name)
	return rel != nil, err
}
