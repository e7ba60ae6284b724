package helmrelease

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"

	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// releaseKube is Helm's Kubernetes client with two changes: it reports
// each object Helm created, as the API server returned it, and while it
// uninstalls a release it deletes only the objects that release owns
// (deleteOwned). It embeds the concrete client so that Helm's optional
// interfaces (logs, three-way merge) still hold.
type releaseKube struct {
	*kube.Client
	// cluster builds with the controller's own rights; Client with the
	// tenant's actor's.
	cluster *kube.Client
	// created, when set, is told of every object Helm creates.
	created func(runtime.Object)
	// namespace is the namespace of the configuration's releases; release,
	// when set, the one being uninstalled.
	namespace, release string
	// gone reports a namespace deleted, being deleted or no longer the
	// release's tenant's (namespaceLost).
	gone func(ctx context.Context, ns string) (bool, error)
	// keepLive, while deleting what earlier revisions left, keeps an
	// object whose live annotations say helm.sh/resource-policy: keep, as
	// Helm's upgrade kept it, in a namespace the tenant keeps (narrow): a
	// release's objects in one it leaves go, kept or not, before the
	// namespace is handed back.
	keepLive bool
	// narrow, when set, are the tenant's namespaces, to which every
	// manifest built has its webhook configurations narrowed
	// (narrowBuilt).
	narrow []string
}

// Build reads a manifest with the actor's clients, except for the
// cluster-scoped objects: the actor holds no right outside the tenant's
// namespaces, and those objects, which the render guard has checked
// (grants.go), are the controller's to write. Its webhook configurations
// are narrowed to the tenant (narrowBuilt), whichever revision the
// manifest is of.
func (k *releaseKube) Build(reader io.Reader, validate bool) (kube.ResourceList, error) {
	infos, err := k.build(reader, validate)
	if err == nil {
		narrowBuilt(infos, k.narrow)
	}
	return infos, err
}

func (k *releaseKube) build(reader io.Reader, validate bool) (kube.ResourceList, error) {
	data, err := io.ReadAll(reader)
	if err != nil {
		return nil, err
	}
	infos, err := k.Client.Build(bytes.NewReader(data), validate)
	if err != nil || k.cluster == nil || !slices.ContainsFunc(infos, clusterScoped) {
		return infos, err
	}
	own, err := k.cluster.Build(bytes.NewReader(data), validate)
	if err != nil {
		return nil, err
	}
	if len(own) != len(infos) {
		return nil, fmt.Errorf("building the release's cluster-scoped objects: %d objects, then %d", len(infos), len(own))
	}
	for i, info := range infos {
		if clusterScoped(info) {
			info.Client = own[i].Client
		}
	}
	return infos, nil
}

// clusterScoped reports whether a manifest object is cluster-scoped.
func clusterScoped(info *resource.Info) bool {
	return info.Mapping != nil && info.Mapping.Scope.Name() == meta.RESTScopeNameRoot
}

func (k *releaseKube) Create(resources kube.ResourceList) (*kube.Result, error) {
	res, err := k.Client.Create(resources)
	if err == nil && res != nil && k.created != nil {
		for _, info := range res.Created {
			k.created(info.Object)
		}
	}
	return res, err
}

func (k *releaseKube) Delete(resources kube.ResourceList) (*kube.Result, []error) {
	return k.DeleteWithPropagationPolicy(resources, metav1.DeletePropagationBackground)
}

func (k *releaseKube) DeleteWithPropagationPolicy(resources kube.ResourceList, policy metav1.DeletionPropagation) (*kube.Result, []error) {
	if k.release == "" {
		return k.Client.DeleteWithPropagationPolicy(resources, policy)
	}
	var hooks kube.ResourceList
	res := &kube.Result{}
	var errs []error
	for _, info := range resources {
		if isHook(info.Object) {
			hooks = append(hooks, info)
			continue
		}
		deleted, err := k.deleteOwned(info, policy)
		if err != nil {
			errs = append(errs, err)
		} else if deleted {
			res.Deleted = append(res.Deleted, info)
		}
	}
	if len(hooks) > 0 {
		hr, herrs := k.Client.DeleteWithPropagationPolicy(hooks, policy)
		errs = append(errs, herrs...)
		if hr != nil {
			res.Deleted = append(res.Deleted, hr.Deleted...)
		}
	}
	return res, errs
}

// deleteOwned deletes the live object of a release manifest entry only
// if it carries the ownership Helm gives the objects of k.release (the
// labels and annotations Helm checks before adopting one), and only that
// very object: the delete is conditional on the UID that was checked.
// Helm's own uninstall deletes every name in the manifest, so a failed
// install's cleanup would delete an object that appeared between Helm's
// existence check and its create: the tenant's, with their data.
func (k *releaseKube) deleteOwned(info *resource.Info, policy metav1.DeletionPropagation) (bool, error) {
	helper := resource.NewHelper(info.Client, info.Mapping)
	kind := info.Mapping.GroupVersionKind.Kind
	for range 3 {
		live, err := helper.Get(info.Namespace, info.Name)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if apierrors.IsForbidden(err) && info.Namespace != "" && k.gone != nil {
			// The actor's rights go with the namespace, and so do its
			// objects.
			if gone, gerr := k.gone(context.Background(), info.Namespace); gerr == nil && gone {
				return true, nil
			}
		}
		if err != nil {
			return false, fmt.Errorf("reading %s %s before deleting it: %w", kind, info.Name, err)
		}
		o, err := meta.Accessor(live)
		if err != nil {
			return false, err
		}
		if !ofRelease(o, k.release, k.namespace) {
			k.Log("keeping %s %s: it is not an object of release %s", kind, info.Name, k.release)
			return false, nil
		}
		if k.keepLive && k.keptWithin(live) && o.GetAnnotations()[kube.ResourcePolicyAnno] == kube.KeepPolicy {
			k.Log("keeping %s %s: it says %s: %s", kind, info.Name, kube.ResourcePolicyAnno, kube.KeepPolicy)
			return false, nil
		}
		uid := o.GetUID()
		_, err = helper.DeleteWithOptions(info.Namespace, info.Name, &metav1.DeleteOptions{
			PropagationPolicy: &policy, Preconditions: &metav1.Preconditions{UID: &uid}})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return true, nil
		case !apierrors.IsConflict(err):
			return false, fmt.Errorf("deleting %s %s: %w", kind, info.Name, err)
		}
		// Replaced since it was read: check the new object.
	}
	return false, fmt.Errorf("deleting %s %s: it keeps being replaced", kind, info.Name)
}

// keptWithin reports whether live, an object Helm keeps, may stay: only
// where everything it reaches (its namespace, the accounts a binding
// names, what a webhook selects) is in the namespaces the tenant keeps. A
// kept binding in a kept namespace that grants to a leaving namespace's
// accounts goes, as a kept object inside a leaving namespace does.
func (k *releaseKube) keptWithin(live runtime.Object) bool {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(live)
	if err != nil {
		return false
	}
	return k.within(reaches(guard.ManifestDoc{Obj: &unstructured.Unstructured{Object: u}}))
}

// within reports whether every one of namespaces is one the tenant keeps.
func (k *releaseKube) within(namespaces []string) bool {
	for _, ns := range namespaces {
		if !slices.Contains(k.narrow, ns) {
			return false
		}
	}
	return true
}

// ofRelease reports whether o carries the marks Helm gives every object of
// release name in namespace ns.
func ofRelease(o metav1.Object, name, ns string) bool {
	a := o.GetAnnotations()
	return o.GetLabels()[guard.HelmManagedBy] == "Helm" &&
		a[guard.AnnotationReleaseName] == name && a[guard.AnnotationReleaseNamespace] == ns
}

// isHook reports whether a manifest object is a Helm hook: hooks carry
// no release marks, and Helm deletes them by their own policies.
func isHook(obj runtime.Object) bool {
	o, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	_, ok := o.GetAnnotations()[release.HookAnnotation]
	return ok
}

// Created remembers an object Helm just made from a release manifest as
// matching it: drift correction then reads it live only once it changes.
// Only a created object is trusted so: an upgrade patches objects that
// may have drifted in fields the patch does not touch.
func (m *DriftMemo) Created(obj runtime.Object) {
	gk := obj.GetObjectKind().GroupVersionKind().GroupKind()
	o, err := meta.Accessor(obj)
	if err != nil || driftKinds[gk] == nil || o.GetResourceVersion() == "" {
		return
	}
	m.set(driftKey(o.GetNamespace(), gk.Kind, o.GetName()), o.GetResourceVersion())
}
