package guard

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/release"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Helm's ownership annotations on the objects of a release.
const (
	AnnotationReleaseName      = "meta.helm.sh/release-name"
	AnnotationReleaseNamespace = "meta.helm.sh/release-namespace"
)

// TamperError names the objects of a release manifest that do not belong
// to the tenant.
type TamperError struct {
	Release string
	What    string // "revision 3", "the rendered chart"
	Foreign []string
}

func (e *TamperError) Error() string {
	return fmt.Sprintf("release %s, %s, names objects outside the tenant: %s; nothing was changed. Fix or delete the release record, or the chart",
		e.Release, e.What, strings.Join(e.Foreign, ", "))
}

// ReleaseScope is what a tenant's release may touch: namespaced objects in
// the tenant's namespaces, and cluster-scoped objects that Helm marked as
// this release's where they exist, or that carry the release-qualified
// name the render guard gives them (opctl.<tenant>.<release>.<name>)
// where they do not.
type ReleaseScope struct {
	Tenant             string
	Release, Namespace string
	Namespaces         []string
	// Leaving are namespaces the Tenant's spec no longer lists that still
	// carry its label: the controller hands them back once no release
	// holds objects there. A stored revision may name objects in them
	// (Helm deletes those as it upgrades or uninstalls); a rendered chart
	// or a rollback target may not.
	Leaving []string
	Mapper  meta.RESTMapper
	Reader  client.Reader
	// Grants is what the release's RBAC may grant outside the namespaces.
	Grants GrantPolicy
}

// Foreign returns the objects a manifest names outside the scope, as
// "Kind namespace/name", sorted. A manifest that does not parse is foreign
// as a whole: Helm would not act on it either, but nothing can vouch for
// it. An error is a failure to read the cluster, not a finding.
func (s ReleaseScope) Foreign(ctx context.Context, manifest string) ([]string, error) {
	return s.foreignDocs(ctx, ManifestDocs(manifest))
}

// foreignStored is foreignDocs of a stored revision Helm only deletes
// from: objects in the namespaces the tenant is leaving are its own, and
// so are those in a namespace it has lost (deleted, or deleted and made
// again for another tenant, while the controller was not looking): the
// revision was the controller's render for the tenant's namespaces then,
// Helm deletes as the tenant's actor, who holds nothing in a namespace
// that is not the tenant's, and only objects marked as the release's.
func (s ReleaseScope) foreignStored(ctx context.Context, docs []ManifestDoc) ([]string, error) {
	s.Namespaces = slices.Concat(s.Namespaces, s.Leaving)
	lost, err := s.lostNamespaces(ctx, docs)
	if err != nil {
		return nil, err
	}
	s.Namespaces = append(s.Namespaces, lost...)
	return s.foreignDocs(ctx, docs)
}

// lostNamespaces are the namespaces outside the scope that docs name and
// that are no longer the tenant's: absent, being deleted, or labelled for
// another tenant.
func (s ReleaseScope) lostNamespaces(ctx context.Context, docs []ManifestDoc) ([]string, error) {
	var lost []string
	for _, d := range docs {
		if d.Obj == nil {
			continue
		}
		ns := d.Obj.GetNamespace()
		if ns == "" || slices.Contains(s.Namespaces, ns) || slices.Contains(lost, ns) {
			continue
		}
		live := &metav1.PartialObjectMetadata{}
		live.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"})
		err := s.Reader.Get(ctx, client.ObjectKey{Name: ns}, live)
		switch {
		case apierrors.IsNotFound(err):
			lost = append(lost, ns)
		case err != nil:
			return nil, fmt.Errorf("checking namespace %s of the stored revision: %w", ns, err)
		case live.DeletionTimestamp != nil:
			lost = append(lost, ns)
		case live.Labels[tenancyv1.LabelTenant] != "" && live.Labels[tenancyv1.LabelTenant] != s.Tenant:
			// Made again for another tenant. A namespace of no tenant's
			// (the platform's, kube-system) was never one a render of
			// the tenant's could name: still foreign.
			lost = append(lost, ns)
		}
	}
	return lost, nil
}

// foreignDocs is foreign of a manifest already split and parsed.
func (s ReleaseScope) foreignDocs(ctx context.Context, docs []ManifestDoc) ([]string, error) {
	var out []string
	for _, d := range docs {
		if d.Err != nil {
			out = append(out, fmt.Sprintf("an unreadable document (%v)", d.Err))
			continue
		}
		if d.Obj == nil {
			continue
		}
		why, err := s.outside(ctx, d.Obj)
		if err != nil {
			return nil, err
		}
		if why != "" {
			out = append(out, why)
		}
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

// outside says why one object is outside the scope, or "".
func (s ReleaseScope) outside(ctx context.Context, u *unstructured.Unstructured) (string, error) {
	gvk := u.GroupVersionKind()
	ns := u.GetNamespace()
	name := gvk.Kind + " " + u.GetName()
	if ns != "" {
		name = gvk.Kind + " " + ns + "/" + u.GetName()
	}
	if gvk.Kind == "" || u.GetName() == "" {
		return "an object without kind or name", nil
	}
	if _, list := u.Object["items"]; list || strings.HasSuffix(gvk.Kind, "List") {
		// Helm reads any object with items as a list and creates each
		// item, of its own kind and namespace: nothing here would see them.
		return name + " (a list: Helm would create its items as objects of their own)", nil
	}
	clusterScoped, known := ScopeOf(s.Mapper, gvk)
	if !known && ns == "" {
		// An unknown kind without a namespace: Helm cannot act on it
		// until it is served, and then it goes to the release namespace
		// or is cluster-scoped; neither can be vouched for now.
		return name + " (unknown kind)", nil
	}
	if !clusterScoped {
		if ns == "" {
			ns = s.Namespace
		}
		if slices.Contains(s.Namespaces, ns) {
			return "", nil
		}
		return name, nil
	}
	live := &metav1.PartialObjectMetadata{}
	live.SetGroupVersionKind(gvk)
	if err := s.Reader.Get(ctx, client.ObjectKey{Name: u.GetName()}, live); apierrors.IsNotFound(err) {
		// Absent: nothing of anyone else's to change, if the name is one
		// only this release is given.
		if !strings.HasPrefix(u.GetName(), s.qualifier()) {
			return name + " (cluster-scoped, not named " + s.qualifier() + "…)", nil
		}
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("checking the owner of %s: %w", name, err)
	}
	a := live.GetAnnotations()
	if a[AnnotationReleaseName] != s.Release || a[AnnotationReleaseNamespace] != s.Namespace {
		return name + " (cluster-scoped, owned by another release)", nil
	}
	return "", nil
}

// qualifier starts the name of every cluster-scoped object the release
// creates.
func (s ReleaseScope) qualifier() string {
	return "opctl." + s.Tenant + "." + s.Release + "."
}

// qualify gives the namespaced objects of a rendered manifest that name
// no namespace the release namespace, its cluster-scoped objects the
// release-qualified name, and points the bindings of the manifest at the
// renamed ClusterRoles. Names that already carry it are kept (the bundle
// renderer gives them).
func (s ReleaseScope) qualify(docs []ManifestDoc) {
	renamed := map[string]string{}
	for _, d := range docs {
		if d.Obj == nil || d.Obj.GetName() == "" {
			continue
		}
		clusterScoped, known := ScopeOf(s.Mapper, d.Obj.GroupVersionKind())
		if known && !clusterScoped && d.Obj.GetNamespace() == "" {
			d.Obj.SetNamespace(s.Namespace) // what the tamper check assumed
		}
		if !known || !clusterScoped || strings.HasPrefix(d.Obj.GetName(), s.qualifier()) {
			continue
		}
		name := s.qualifier() + d.Obj.GetName()
		if len(name) > 253 {
			name = s.qualifier() + shortHash(d.Obj.GetName())
		}
		renamed[d.Obj.GetKind()+"/"+d.Obj.GetName()] = name
		d.Obj.SetName(name)
	}
	for _, d := range docs {
		if d.Obj == nil || d.Obj.GroupVersionKind().Group != rbacv1.GroupName {
			continue
		}
		if k := d.Obj.GetKind(); k != "ClusterRoleBinding" && k != "RoleBinding" {
			continue
		}
		ref, _, _ := unstructured.NestedString(d.Obj.Object, "roleRef", "name")
		if to, ok := renamed["ClusterRole/"+ref]; ok {
			_ = unstructured.SetNestedField(d.Obj.Object, to, "roleRef", "name")
		}
	}
}

// ScopeOf reports whether the API server serves gvk cluster-scoped, and
// whether it serves gvk at all.
func ScopeOf(mapper meta.RESTMapper, gvk schema.GroupVersionKind) (clusterScoped, known bool) {
	if mapper == nil {
		return false, false
	}
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, false
	}
	return m.Scope.Name() == meta.RESTScopeNameRoot, true
}

// Verify checks the manifests of stored revisions before Helm acts on
// them: every object they name must be the tenant's. Their hooks are not
// checked: a tenant's release never runs hooks (helmClient.install).
func (s ReleaseScope) Verify(ctx context.Context, revisions ...*release.Release) error {
	for _, rel := range revisions {
		if err := s.verifyRevision(ctx, rel, false); err != nil {
			return err
		}
	}
	return nil
}

// VerifyApply is verify of a revision whose manifest Helm applies again
// (the target of a rollback): its grants are checked too. Its webhook
// configurations need no check: they are narrowed as Helm builds the
// manifest (helmrelease's narrowBuilt), whichever controller rendered
// the revision.
func (s ReleaseScope) VerifyApply(ctx context.Context, rel *release.Release) error {
	return s.verifyRevision(ctx, rel, true)
}

func (s ReleaseScope) verifyRevision(ctx context.Context, rel *release.Release, applies bool) error {
	if rel == nil {
		return nil
	}
	what := fmt.Sprintf("revision %d", rel.Version)
	docs := ManifestDocs(rel.Manifest)
	foreign, err := s.foreignStored(ctx, docs)
	if applies {
		foreign, err = s.foreignDocs(ctx, docs)
	}
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		return &TamperError{Release: s.Namespace + "/" + s.Release, What: what, Foreign: foreign}
	}
	if !applies {
		return nil
	}
	granted, err := s.Grants.Check(ctx, docs)
	if err != nil {
		return err
	}
	if len(granted) > 0 {
		return &GrantError{Release: s.Namespace + "/" + s.Release, What: what, Grants: granted}
	}
	return nil
}

// RenderGuard is a Helm post-renderer that refuses a rendered manifest
// naming objects outside the scope, before Helm touches the cluster, and
// sets the tenant's owned labels on every object: the guardrail policies
// keep labelled objects for the controller, and a shard caches its own.
type RenderGuard struct {
	Ctx    context.Context
	Scope  ReleaseScope
	Labels map[string]string
}

// Run returns the labelled manifest, or fails.
func (g RenderGuard) Run(rendered *bytes.Buffer) (*bytes.Buffer, error) {
	// One parse serves the names, the checks and the labelling.
	docs, objects := g.Scope.Grants.ClusterObjects(ManifestDocs(rendered.String()))
	g.Scope.qualify(docs)
	docs = localize(docs, g.Scope.Namespaces)
	foreign, err := g.Scope.foreignDocs(g.Ctx, docs)
	if err != nil {
		return nil, err
	}
	if len(foreign) > 0 {
		return nil, &TamperError{Release: g.Scope.Namespace + "/" + g.Scope.Release, What: "the rendered chart", Foreign: foreign}
	}
	granted, err := g.Scope.Grants.Check(g.Ctx, docs)
	if err != nil {
		return nil, err
	}
	if granted = append(objects, granted...); len(granted) > 0 {
		return nil, &GrantError{Release: g.Scope.Namespace + "/" + g.Scope.Release, What: "the rendered chart", Grants: granted}
	}
	return labelDocs(docs, g.Labels, g.Scope.Namespaces, func(u *unstructured.Unstructured) bool {
		clusterScoped, _ := ScopeOf(g.Scope.Mapper, u.GroupVersionKind())
		return clusterScoped
	})
}

// labelDocs sets labels on every object of a parsed manifest, keeping the
// documents' order and their leading comments (Helm's "# Source:"),
// narrows its webhooks to the tenant's namespaces (NarrowWebhooks), and
// drops helm.sh/resource-policy from its cluster-scoped objects: a kept
// ClusterRoleBinding or webhook configuration would outlive the release
// and the Tenant, and act for whoever next has its namespace's name.
func labelDocs(docs []ManifestDoc, labels map[string]string, namespaces []string, clusterScoped func(*unstructured.Unstructured) bool) (*bytes.Buffer, error) {
	out := &bytes.Buffer{}
	for _, d := range docs {
		if d.Err != nil {
			return nil, fmt.Errorf("reading the rendered manifest: %w", d.Err)
		}
		if d.Obj == nil {
			continue
		}
		SetLabels(d.Obj, labels)
		NarrowWebhooks(d.Obj, namespaces)
		if clusterScoped(d.Obj) {
			DropResourcePolicy(d.Obj)
		}
		b, err := manifestYAML(d.Obj.Object)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		for _, c := range d.comments {
			out.WriteString(c + "\n")
		}
		out.Write(b)
	}
	return out, nil
}

// ResourcePolicy is Helm's annotation that keeps an object on uninstall.
const ResourcePolicy = "helm.sh/resource-policy"

// DropResourcePolicy removes ResourcePolicy from u's annotations.
func DropResourcePolicy(u *unstructured.Unstructured) {
	ann := u.GetAnnotations()
	if _, ok := ann[ResourcePolicy]; !ok {
		return
	}
	delete(ann, ResourcePolicy)
	if len(ann) == 0 {
		ann = nil
	}
	u.SetAnnotations(ann)
}

// SetLabels sets labels on u.
func SetLabels(u *unstructured.Unstructured, set map[string]string) {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, set)
	u.SetLabels(labels)
}

// shortHash is 16 hex digits of the sha256 of s.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// HelmManagedBy is the label Helm sets, to "Helm", on every object it makes.
const HelmManagedBy = "app.kubernetes.io/managed-by"

// HelmInstance is the label Helm charts set to the release name.
const HelmInstance = "app.kubernetes.io/instance"
