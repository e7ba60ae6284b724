package helmrelease

import (
	"context"
	"errors"
	"slices"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/baseline"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
	"opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
)

// Holds and Recorded run on every reconcile of a Tenant whose namespaces
// changed, for each release and namespace: they read the records through
// the storage driver alone (its index when synced), not a whole Helm
// action configuration with its Kubernetes clients.

// lastRecorded is the latest revision of release name of tenant in ns,
// or nil.
func (c *Reconciler) lastRecorded(tenant, ns, name string) (*release.Release, error) {
	rel, err := storage.Init(c.Helm.storage(tenant, ns)).Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	return rel, err
}

// Holds reports whether a revision of release name of t, in ns, whose
// objects may still exist names objects in, or binding accounts of, any
// of namespaces (reaches): Helm would
// still delete them there at its next upgrade or uninstall, with the
// actor's rights in them. Those are the live revisions (liveRevisions)
// once the release's leftovers of earlier ones are swept at its last
// revision, and every stored revision until then: an upgrade that failed,
// and whose rollback failed too, sits before the revision deployed since
// with what it created.
func (c *Reconciler) Holds(t *tenancyv1.Tenant, ns, name string, namespaces []string) (bool, error) {
	hist, err := c.history(t.Name, ns, name)
	if err != nil || len(hist) == 0 {
		return false, err
	}
	revs := hist
	if c.swept.done(t.Name, ns, name, hist[len(hist)-1].Version) {
		revs = liveRevisions(hist)
	}
	for _, rel := range revs {
		for _, d := range guard.ManifestDocs(rel.Manifest) {
			if d.Obj != nil && slices.ContainsFunc(reaches(d), func(ns string) bool { return slices.Contains(namespaces, ns) }) {
				return true, nil
			}
		}
	}
	return false, nil
}

// reaches are the namespaces a release's object is in or reaches into:
// its own; for a RoleBinding or ClusterRoleBinding, those whose
// ServiceAccounts its subjects name, by kind, user name or group (a
// ClusterRoleBinding of a namespace's account is in no namespace, yet it
// goes with that namespace); for a webhook configuration, those its
// webhooks' Services are in and those the narrowing selects by name.
func reaches(d guard.ManifestDoc) []string {
	out := []string{d.Obj.GetNamespace()}
	group, kind := d.Obj.GroupVersionKind().Group, d.Obj.GetKind()
	switch {
	case group == rbacv1.GroupName && (kind == "RoleBinding" || kind == "ClusterRoleBinding"):
		var b rbacv1.RoleBinding
		if runtime.DefaultUnstructuredConverter.FromUnstructured(d.Obj.Object, &b) == nil {
			for _, s := range b.Subjects {
				if ns := baseline.SubjectNamespace(b.Namespace, s); ns != "" {
					out = append(out, ns)
				}
			}
		}
	case group == admissionregistrationv1.GroupName && (kind == "ValidatingWebhookConfiguration" || kind == "MutatingWebhookConfiguration"):
		hooks, _, _ := unstructured.NestedSlice(d.Obj.Object, "webhooks")
		for _, h := range hooks {
			m, _ := h.(map[string]any)
			if ns, _, _ := unstructured.NestedString(m, "clientConfig", "service", "namespace"); ns != "" {
				out = append(out, ns)
			}
			exprs, _, _ := unstructured.NestedSlice(m, "namespaceSelector", "matchExpressions")
			for _, e := range exprs {
				em, _ := e.(map[string]any)
				if em["key"] == corev1.LabelMetadataName && em["operator"] == string(metav1.LabelSelectorOpIn) {
					values, _, _ := unstructured.NestedStringSlice(em, "values")
					out = append(out, values...)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// history is every stored revision of release name of tenant in ns,
// oldest first.
func (c *Reconciler) history(tenant, ns, name string) ([]*release.Release, error) {
	hist, err := storage.Init(c.Helm.storage(tenant, ns)).History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(hist, func(a, b *release.Release) int { return a.Version - b.Version })
	return hist, nil
}

// liveRevisions are the revisions of hist (oldest first) whose objects
// may exist when no earlier revision left any: the last deployed one and
// every later one (a failed upgrade created some of its objects and
// deleted none of the deployed revision's), or all of them when none was
// deployed.
func liveRevisions(hist []*release.Release) []*release.Release {
	from := 0
	for i, rel := range hist {
		if rel.Info != nil && rel.Info.Status == release.StatusDeployed {
			from = i
		}
	}
	return hist[from:]
}

// Recorded reports whether release name of t has a revision in ns.
func (c *Reconciler) Recorded(t *tenancyv1.Tenant, ns, name string) (bool, error) {
	rel, err := c.lastRecorded(t.Name, ns, name)
	return rel != nil, err
}

// Releases lists every release of tenant the controller's storage
// records, wherever recorded (records.Store.Releases).
func (c *Reconciler) Releases(ctx context.Context, tenant string) ([]records.Recorded, error) {
	return c.Helm.Records.Releases(ctx, tenant)
}
