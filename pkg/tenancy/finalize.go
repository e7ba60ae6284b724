package tenancy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/sharding"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Finalize runs before operatorkit deletes or disconnects the namespaces
// and their objects. Delete has each backend remove its operators (and,
// if allowed, deletes the shared CRDs no other Tenant uses); Orphan
// removes the Tenant's ownerReferences and labels from everything and
// leaves it all running.
func (c *Controller) Finalize(ctx context.Context, t *tenancyv1.Tenant, policy operatorkit.DeletionPolicy) (bool, error) {
	for _, ns := range t.Spec.Namespaces {
		defer c.drift.Forget(ns)
	}
	// Done once per process: operatorkit calls again until the objects
	// Build names are gone, the actor's among them, which ensureActor
	// would otherwise bring back.
	if _, done := c.finalized.Load(t.UID); done {
		return true, nil
	}
	byBackend := c.operatorsByBackend(t)
	if policy == operatorkit.DeletionOrphan {
		// The namespaces t is leaving go back first: disconnect takes
		// t's label off the others, after which the actor (which
		// settleLeaving needs) cannot be written there again.
		if done, err := c.settleLeaving(ctx, t); err != nil || !done {
			return false, err
		}
		if done, err := c.handBackLeaving(ctx, t); err != nil || !done {
			return false, err
		}
		if err := c.disconnect(ctx, t, byBackend); err != nil {
			return false, err
		}
		c.finalized.Store(t.UID, true)
		return true, nil
	}
	if err := c.ensureActor(ctx, t); err != nil {
		return false, err
	}
	for i, b := range c.backends {
		if len(byBackend[i]) == 0 {
			continue
		}
		if err := b.remove(ctx, t, byBackend[i]); err != nil {
			return false, err
		}
	}
	// The releases no operator of the spec or status names any more.
	if err := c.releases.uninstallAll(ctx, t, nil); err != nil {
		return false, err
	}
	if c.opts.DeleteUnusedCRDs {
		if err := c.deleteUnusedCRDs(ctx, t); err != nil {
			return false, err
		}
	}
	if done, err := c.handBackLeaving(ctx, t); err != nil || !done {
		return false, err
	}
	if err := c.removeActor(ctx, t, true); err != nil {
		return false, err
	}
	c.finalized.Store(t.UID, true)
	return true, nil
}

// settleLeaving brings t's operators to its spec before an Orphan
// deletion leaves them running, when one still holds a namespace t is
// leaving (the platform took it and deleted the Tenant before the
// controller saw the change): the owners keep the releases as the spec
// has them, and the namespace is handed back without the release's
// objects and grants there. When that keeps failing for settleGrace (the
// chart can no longer be read, say), the releases that hold such a
// namespace are uninstalled instead, with a Warning: the deletion ends,
// and nothing of the tenant's is left in a namespace handed back. done is
// false until nothing holds one.
func (c *Controller) settleLeaving(ctx context.Context, t *tenancyv1.Tenant) (done bool, err error) {
	leaving, err := leavingNamespaces(ctx, c.reader, t)
	if err != nil || len(leaving) == 0 {
		return err == nil, err
	}
	if held, err := c.leavingHeld(ctx, t, leaving); err != nil || !held {
		return err == nil, err
	}
	if err := c.ensureActor(ctx, t); err != nil {
		return false, err
	}
	err = c.toSpec(ctx, t)
	if err == nil {
		held, err := c.leavingHeld(ctx, t, leaving)
		if err != nil || !held {
			c.settleFailing.Delete(t.UID)
			return err == nil, err
		}
	}
	if err == nil {
		// Repaired, yet held: an upgrade that failed (the tenant's
		// quota full, say) keeps the deployed revision's objects.
		err = errors.New("a release still holds them after the upgrade; see the Tenant's operators")
	}
	first, _ := c.settleFailing.LoadOrStore(t.UID, time.Now())
	if time.Since(first.(time.Time)) < settleGrace {
		return false, fmt.Errorf("bringing the operators to the spec before leaving them running (namespaces %s are being handed back): %w", strings.Join(leaving, ", "), err)
	}
	if err := c.uninstallHolding(ctx, t, leaving, err); err != nil {
		return false, err
	}
	c.settleFailing.Delete(t.UID)
	held, err := c.leavingHeld(ctx, t, leaving)
	return err == nil && !held, err
}

// settleGrace is how long settleLeaving retries before it uninstalls.
const settleGrace = time.Minute

// toSpec runs the check and repair steps for t.
func (c *Controller) toSpec(ctx context.Context, t *tenancyv1.Tenant) error {
	p, err := c.Check(ctx, t)
	if err != nil {
		return err
	}
	return c.Repair(ctx, t, p, nil)
}

// uninstallHolding uninstalls the releases of t recorded in, or holding
// objects in, the namespaces t is leaving, saying why (cause).
func (c *Controller) uninstallHolding(ctx context.Context, t *tenancyv1.Tenant, leaving []string, cause error) error {
	recorded, err := c.releases.recorded(ctx, t, nil)
	if err != nil {
		return err
	}
	for _, rec := range recorded {
		held := slices.Contains(leaving, rec.Namespace)
		if !held {
			if held, err = c.releases.engine.Holds(t, rec.Namespace, rec.Name, leaving); err != nil {
				return err
			}
		}
		if !held {
			continue
		}
		scope := c.releases.scope(t, rec.Namespace, rec.Name, nil)
		scope.Leaving = leaving
		if err := c.releases.engine.Uninstall(ctx, t, rec.Namespace, rec.Name, scope); err != nil {
			return err
		}
		c.event(t, "Warning", "ReleaseUninstalled", "uninstalled %s rather than leave it running (Orphan): it holds namespaces %s, which the tenant is leaving, and it could not be brought to the spec for %s: %v",
			rec.Name, strings.Join(leaving, ", "), settleGrace, cause)
	}
	return nil
}

// handBackLeaving hands the namespaces t is leaving back to the platform
// once its releases are gone or disconnected, so that no ownerReference
// has the garbage collector delete a namespace the spec no longer names.
// done is false while a namespace needs another look (handBackAll), and
// Finalize is called again.
func (c *Controller) handBackLeaving(ctx context.Context, t *tenancyv1.Tenant) (done bool, err error) {
	leaving, err := leavingNamespaces(ctx, c.reader, t)
	if err != nil {
		return false, err
	}
	return c.handBackAll(ctx, t, c.deletionSettings(t), leaving)
}

// operatorsByBackend lists, sorted, the names of t's operators by the
// index of their backend: those of the spec, and those of the status that
// the spec no longer names.
func (c *Controller) operatorsByBackend(t *tenancyv1.Tenant) [][]string {
	of := map[string]int{}
	for _, st := range t.Status.Operators {
		for i, b := range c.backends {
			if b.installed(st) {
				of[st.Name] = i
				break
			}
		}
	}
	for _, op := range t.Spec.Operators {
		for i, b := range c.backends {
			if _, ok := b.source(op); ok {
				of[op.Name] = i
			}
		}
	}
	out := make([][]string, len(c.backends))
	for _, name := range slices.Sorted(maps.Keys(of)) {
		out[of[name]] = append(out[of[name]], name)
	}
	return out
}

// deleteUnusedCRDs deletes the shared CRDs t used that no other Tenant
// uses.
func (c *Controller) deleteUnusedCRDs(ctx context.Context, t *tenancyv1.Tenant) error {
	// Live, not from the cache: a shard's cache holds only its own Tenants.
	var tenants tenancyv1.TenantList
	if err := c.reader.List(ctx, &tenants); err != nil {
		return err
	}
	used := map[string]bool{}
	for _, other := range tenants.Items {
		if other.UID == t.UID {
			continue
		}
		for _, st := range other.Status.Operators {
			for _, crd := range st.CRDs {
				used[crd] = true
			}
		}
	}
	for _, st := range t.Status.Operators {
		for _, name := range st.CRDs {
			if used[name] {
				continue
			}
			// Only a CRD the controller installed for tenants, read live
			// and deleted under the UID it checked.
			live := &metav1.PartialObjectMetadata{}
			live.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
			if err := c.reader.Get(ctx, client.ObjectKey{Name: name}, live); apierrors.IsNotFound(err) {
				continue
			} else if err != nil {
				return fmt.Errorf("reading unused CRD %s: %w", name, err)
			}
			if live.Labels[tenancyv1.LabelSharedCRD] != "true" {
				c.event(t, "Warning", "CRDKept", "kept CRD %s: the tenancy controller did not install it (no %s label)", name, tenancyv1.LabelSharedCRD)
				continue
			}
			uid := live.UID
			if err := c.client.Delete(ctx, live, client.Preconditions{UID: &uid}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting unused CRD %s: %w", name, err)
			}
			c.event(t, "Normal", "CRDDeleted", "deleted CRD %s, which no other tenant uses", name)
		}
	}
	return nil
}

// disconnect hands every operator over through its backend, then
// removes t's ownerReferences and tenant label from the namespaces and
// the objects in them.
func (c *Controller) disconnect(ctx context.Context, t *tenancyv1.Tenant, byBackend [][]string) error {
	objs, err := c.Build(ctx, t, nil)
	if err != nil {
		return err
	}
	for i, b := range c.backends {
		if len(byBackend[i]) == 0 {
			continue
		}
		more, err := b.disconnect(ctx, t, byBackend[i])
		if err != nil {
			return err
		}
		objs = append(objs, more...)
	}
	if err := c.releases.handBackAll(ctx, t, nil); err != nil {
		return err
	}
	// The actor is the controller's identity, not the tenant's: it goes,
	// with its rights there.
	if err := c.removeActor(ctx, t, false); err != nil {
		return err
	}
	for _, desired := range objs {
		if c.isActor(t, desired) {
			continue
		}
		live := desired.DeepCopyObject().(client.Object)
		if err := c.reader.Get(ctx, client.ObjectKeyFromObject(desired), live); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		patch := client.MergeFrom(live.DeepCopyObject().(client.Object))
		changed := false
		refs := live.GetOwnerReferences()[:0]
		for _, ref := range live.GetOwnerReferences() {
			if ref.UID == t.UID {
				changed = true
				continue
			}
			refs = append(refs, ref)
		}
		live.SetOwnerReferences(refs)
		if labels := live.GetLabels(); labels[tenancyv1.LabelTenant] == t.Name {
			delete(labels, tenancyv1.LabelTenant)
			if c.opts.Shard != nil {
				delete(labels, sharding.ShardLabel(c.opts.Shard.Ring))
			}
			live.SetLabels(labels)
			changed = true
		}
		if !changed {
			continue
		}
		if err := c.client.Patch(ctx, live, patch); err != nil && !apierrors.IsNotFound(err) {
			gvk, _ := apiutil.GVKForObject(live, c.client.Scheme())
			return fmt.Errorf("disconnecting %s %s: %w", gvk.Kind, live.GetName(), err)
		}
	}
	c.event(t, "Normal", "Disconnected", "left namespaces %s and their releases running", strings.Join(t.Spec.Namespaces, ", "))
	return nil
}
