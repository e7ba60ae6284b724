package tenancy

import (
	"context"
	"fmt"
	"slices"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

// leavingNamespaces are the namespaces that still carry t's label though
// its spec no longer lists them, sorted: the platform took them from the
// Tenant. Until no release of t holds objects there, they stay as they
// are (labelled, owned, the actor's rights in place), so Helm can delete
// what the releases' stored revisions put there; then handBack releases
// them. Read live: the label is the controller's (owners cannot write a
// Namespace), and the cache may lag a removal.
func leavingNamespaces(ctx context.Context, reader client.Reader, t *tenancyv1.Tenant) ([]string, error) {
	var list corev1.NamespaceList
	if err := reader.List(ctx, &list, client.MatchingLabels{tenancyv1.LabelTenant: t.Name}); err != nil {
		return nil, fmt.Errorf("listing the namespaces of tenant %s: %w", t.Name, err)
	}
	var out []string
	for _, ns := range list.Items {
		if !slices.Contains(t.Spec.Namespaces, ns.Name) {
			out = append(out, ns.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// releaseLeaving hands the namespaces t is leaving back to the platform
// once no operator of t holds anything there: no release's last revision
// names an object in them (Helm deleted those as it upgraded to the
// spec's namespaces), and OLM's OperatorGroup no longer targets them. It
// deletes what the controller made in each (the owners' and the actor's
// bindings and roles, the quota, the limit range, the network policies),
// then takes the Tenant's labels, annotations and ownerReference off the
// namespace. The tenant's own objects there stay, for the platform to keep
// or delete.
func (c *Controller) releaseLeaving(ctx context.Context, t *tenancyv1.Tenant, p *plan) error {
	if len(p.leaving) == 0 {
		return nil
	}
	for _, op := range p.operators {
		if op.release == nil {
			continue
		}
		held, err := c.releases.engine.Holds(t, op.release.Namespace, op.release.Name, p.leaving)
		if err != nil || held {
			return err
		}
	}
	if held, err := c.operatorGroupTargets(ctx, t, p.leaving); err != nil || held {
		return err
	}
	return c.handBackAll(ctx, t, p.settings, p.leaving)
}

// operatorGroupTargets reports whether t's OperatorGroup, if it has one,
// still targets any of namespaces: OLM's grants to its operators there go
// once it does not.
func (c *Controller) operatorGroupTargets(ctx context.Context, t *tenancyv1.Tenant, namespaces []string) (bool, error) {
	og := &operatorsv1.OperatorGroup{}
	if err := c.reader.Get(ctx, client.ObjectKey{Namespace: t.Spec.Namespaces[0], Name: OperatorGroupName}, og); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return false, nil
		}
		return false, err
	}
	for _, ns := range slices.Concat(og.Spec.TargetNamespaces, og.Status.Namespaces) {
		if slices.Contains(namespaces, ns) {
			return true, nil
		}
	}
	return false, nil
}

// handBackAll hands the namespaces back to the platform (releaseLeaving).
func (c *Controller) handBackAll(ctx context.Context, t *tenancyv1.Tenant, s settings, namespaces []string) error {
	for _, ns := range namespaces {
		gone := t.DeepCopy()
		gone.Spec.Namespaces = []string{ns}
		objs := slices.Concat(namespaceObjects(gone, ns, s, quota.Quota{}), actorObjects(gone, s, c.opts.StorageNamespace, nil))
		for _, o := range objs {
			if o.GetNamespace() != ns {
				continue // the namespace itself, and the actor's ServiceAccount in the controller's namespace
			}
			if err := c.deleteIfTenants(ctx, t, o); err != nil {
				return err
			}
		}
		if err := c.handBackNamespace(ctx, t, s, ns); err != nil {
			return err
		}
		c.event(t, "Normal", "NamespaceReleased", "namespace %s is no longer the tenant's: its owners' rights and the controller's objects there are gone, its workloads stay", ns)
	}
	return nil
}

// deleteIfTenants deletes o if the live object carries t's label.
func (c *Controller) deleteIfTenants(ctx context.Context, t *tenancyv1.Tenant, o client.Object) error {
	live := o.DeepCopyObject().(client.Object)
	if err := c.reader.Get(ctx, client.ObjectKeyFromObject(o), live); err != nil {
		return client.IgnoreNotFound(err)
	}
	if live.GetLabels()[tenancyv1.LabelTenant] != t.Name {
		return nil
	}
	if err := c.client.Delete(ctx, live, client.Preconditions{UID: ptr.To(live.GetUID())}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing namespace %s: deleting %s: %w", o.GetNamespace(), o.GetName(), err)
	}
	return nil
}

// handBackNamespace takes t's labels (but the Pod Security level, which
// keeps the tenant's pods there as they were), the actor annotation and t's
// ownerReference off namespace ns, if it is still t's.
func (c *Controller) handBackNamespace(ctx context.Context, t *tenancyv1.Tenant, s settings, ns string) error {
	live := &corev1.Namespace{}
	if err := c.reader.Get(ctx, client.ObjectKey{Name: ns}, live); err != nil {
		return client.IgnoreNotFound(err)
	}
	if live.Labels[tenancyv1.LabelTenant] != t.Name {
		return nil
	}
	patch := client.MergeFromWithOptions(live.DeepCopy(), client.MergeFromWithOptimisticLock{})
	for k := range s.namespaceLabels(t.Name) {
		if k != labelPSAEnforce {
			delete(live.Labels, k)
		}
	}
	delete(live.Annotations, tenancyv1.AnnotationActor)
	live.OwnerReferences = slices.DeleteFunc(live.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == t.UID })
	if err := c.client.Patch(ctx, live, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing namespace %s: %w", ns, err)
	}
	return nil
}
