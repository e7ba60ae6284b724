package tenancy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/sharding"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
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

// formerReleaseNamespaces are where t's releases may be recorded besides
// the first of spec.namespaces, the release namespace: the other
// namespaces of the spec (reordered) and those t is leaving.
func formerReleaseNamespaces(t *tenancyv1.Tenant, leaving []string) []string {
	return slices.Concat(t.Spec.Namespaces[1:], leaving)
}

// moveReleases uninstalls, before the backends act, every release of t the
// controller's storage records that the plan does not run where it is
// recorded: one recorded in another namespace than the release namespace,
// the first of spec.namespaces (the platform took that one away, deleted
// it or reordered the list: the release is installed again in the new
// first namespace), and one whose operator the spec no longer names (or
// names with another backend). Its old objects (a webhook selecting a
// namespace no longer the tenant's, a binding of its ServiceAccounts) and
// records go first, with the actor's rights there. A release whose
// operator waits for its plan (a catalog not readable yet) is left as it
// is until the plan can install it again.
func (c *Controller) moveReleases(ctx context.Context, t *tenancyv1.Tenant, p *plan) (moving, removing error) {
	if err := c.moveSubscriptions(ctx, t, p); err != nil {
		return err, nil
	}
	recorded, err := c.releases.recorded(ctx, t, nil)
	if err != nil {
		return err, nil
	}
	var moves, removes []error
	for _, rec := range recorded {
		op, named := p.releaseOperator(rec.Name)
		switch {
		case named && op.release == nil:
			continue
		case named && rec.Namespace == op.release.Namespace:
			continue
		}
		scope := c.releases.scope(t, rec.Namespace, rec.Name, p)
		err := c.releases.engine.Uninstall(ctx, t, rec.Namespace, rec.Name, scope)
		switch {
		case named && err != nil:
			moves = append(moves, fmt.Errorf("moving release %s out of namespace %s, no longer the tenant's first: %w", rec.Name, rec.Namespace, err))
		case err != nil:
			// Not the spec's operators' concern: they install.
			removes = append(removes, fmt.Errorf("uninstalling release %s from namespace %s, whose operator the spec no longer names: %w", rec.Name, rec.Namespace, err))
		case named:
			c.event(t, "Normal", "ReleaseMoved", "uninstalled %s from namespace %s, no longer the tenant's first, to install it in %s", rec.Name, rec.Namespace, op.release.Namespace)
		default:
			c.event(t, "Normal", "ReleaseRemoved", "uninstalled %s from namespace %s: the spec no longer names its operator", rec.Name, rec.Namespace)
		}
	}
	return errors.Join(moves...), errors.Join(removes...)
}

// releaseOperator is the operator of p that runs as release name, if any.
func (p *plan) releaseOperator(name string) (operatorPlan, bool) {
	for _, op := range p.operators {
		if _, ok := op.backend.(releaseBackend); ok && op.spec.Name == name {
			return op, true
		}
	}
	return operatorPlan{}, false
}

// moveSubscriptions is moveReleases for OLM: the OperatorGroup and
// Subscriptions live in the first namespace too, and those left in a
// namespace that was first before are removed (Subscriptions, CSVs, the
// OperatorGroup) so that OLM installs in the new first namespace alone. A
// Subscription of an operator the spec no longer names is removed too.
func (c *Controller) moveSubscriptions(ctx context.Context, t *tenancyv1.Tenant, p *plan) error {
	for _, b := range c.backends {
		olm, ok := b.(*olmBackend)
		if !ok {
			continue
		}
		var names []string
		for _, op := range p.operators {
			if op.backend == b {
				names = append(names, op.spec.Name)
			}
		}
		if err := olm.unsubscribeDropped(ctx, t, t.Spec.Namespaces[0], names); err != nil {
			return err
		}
		for _, ns := range formerReleaseNamespaces(t, p.leaving) {
			// Every Subscription of t's there goes, those of operators
			// the spec no longer names too.
			if err := olm.unsubscribeDropped(ctx, t, ns, nil); err != nil {
				return err
			}
			has, err := olm.hasOperatorGroup(ctx, ns)
			if err != nil {
				return err
			}
			if !has {
				continue
			}
			if err := olm.removeFrom(ctx, t, ns, names); err != nil {
				return fmt.Errorf("moving the OLM operators out of namespace %s, no longer the tenant's first: %w", ns, err)
			}
			c.event(t, "Normal", "ReleaseMoved", "removed the OperatorGroup and Subscriptions from namespace %s, no longer the tenant's first, to install them in %s", ns, t.Spec.Namespaces[0])
		}
	}
	return nil
}

// releaseLeaving hands the namespaces t is leaving back to the platform
// once no operator of t holds anything there: no release of t the storage
// records (whatever the spec names) is recorded there or has a last
// revision naming an object there (Helm deleted those
// as it upgraded to the spec's namespaces), and no OperatorGroup of t's
// targets them. handBackAll says what a hand-back takes away.
func (c *Controller) releaseLeaving(ctx context.Context, t *tenancyv1.Tenant, p *plan) error {
	if len(p.leaving) == 0 {
		return nil
	}
	if held, err := c.leavingHeld(ctx, t, p.leaving); err != nil || held {
		return err
	}
	done, err := c.handBackAll(ctx, t, p.settings, p.leaving)
	if err == nil && !done {
		p.requeueAtMost(authorizerLag)
	}
	return err
}

// leavingHeld reports whether an operator of t still holds one of the
// namespaces t is leaving: a release of t the storage records (whatever
// the spec names) is recorded there or its last revision names an object
// there, or an OperatorGroup of t's is there or targets it.
func (c *Controller) leavingHeld(ctx context.Context, t *tenancyv1.Tenant, leaving []string) (bool, error) {
	recorded, err := c.releases.recorded(ctx, t, nil)
	if err != nil {
		return false, err
	}
	for _, rec := range recorded {
		if slices.Contains(leaving, rec.Namespace) {
			return true, nil // moveReleases has not moved it yet
		}
		held, err := c.releases.engine.Holds(t, rec.Namespace, rec.Name, leaving)
		if err != nil || held {
			return held, err
		}
	}
	if held, err := c.subscribedIn(ctx, t, leaving); err != nil || held {
		return held, err
	}
	return c.operatorGroupTargets(ctx, t, slices.Concat(t.Spec.Namespaces[:1], leaving), leaving)
}

// subscribedIn reports whether a Subscription of t's is in any of
// namespaces: its CSV has OLM write its RoleBindings there again.
func (c *Controller) subscribedIn(ctx context.Context, t *tenancyv1.Tenant, namespaces []string) (bool, error) {
	for _, ns := range namespaces {
		var subs operatorsv1alpha1.SubscriptionList
		err := c.owned().List(ctx, &subs, client.InNamespace(ns), client.MatchingLabels{tenancyv1.LabelTenant: t.Name})
		if meta.IsNoMatchError(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("listing the Subscriptions of tenant %s in %s: %w", t.Name, ns, err)
		}
		if len(subs.Items) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// authorizerLag is how long the next look at a namespace being handed
// back waits after RoleBindings were deleted there: the API server
// authorizes from a cache, so a binding just deleted may still let its
// subject create another for a moment.
const authorizerLag = 2 * time.Second

// operatorGroupTargets reports whether an OperatorGroup of t's, in any of
// in, still exists in or targets any of namespaces: OLM's grants to its
// operators there go once none does.
func (c *Controller) operatorGroupTargets(ctx context.Context, t *tenancyv1.Tenant, in, namespaces []string) (bool, error) {
	for _, at := range in {
		og := &operatorsv1.OperatorGroup{}
		if err := c.getOwned(ctx, client.ObjectKey{Namespace: at, Name: OperatorGroupName}, og); err != nil {
			if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
				continue
			}
			return false, err
		}
		if slices.Contains(namespaces, at) {
			return true, nil
		}
		for _, ns := range slices.Concat(og.Spec.TargetNamespaces, og.Status.Namespaces) {
			if slices.Contains(namespaces, ns) {
				return true, nil
			}
		}
	}
	return false, nil
}

// handedBackKinds are the kinds of the controller's objects in a tenant
// namespace, which a hand-back deletes where they carry t's label.
func handedBackKinds() []client.ObjectList {
	return []client.ObjectList{&corev1.ResourceQuotaList{}, &corev1.LimitRangeList{}, &networkingv1.NetworkPolicyList{}, &rbacv1.RoleList{}}
}

// handBackAll hands the namespaces back to the platform: no grant of the
// tenant's stays there. It deletes every RoleBinding in each (the owners',
// the actor's and OLM's, and those the owners made, which would keep them
// or their ServiceAccounts in a namespace no guardrail watches any more),
// the controller's quota, limit range, network policies and roles (by t's
// label, whatever the plan's quota), then takes the Tenant's labels (but
// the Pod Security level), the actor annotation and the ownerReference off
// the namespace. The tenant's workloads and other objects stay, for the
// platform to keep or delete; the namespace is still t's (labelled) while
// this runs, so a failure is retried. A namespace is handed back only by
// a pass that finds no RoleBinding there to delete (done reports whether
// every one was): one the authorizer's cache still allowed after the
// deletes is caught by the next pass.
func (c *Controller) handBackAll(ctx context.Context, t *tenancyv1.Tenant, s settings, namespaces []string) (done bool, err error) {
	done = true
	for _, ns := range namespaces {
		live := &corev1.Namespace{}
		if err := c.reader.Get(ctx, client.ObjectKey{Name: ns}, live); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return false, err
		}
		if live.Labels[tenancyv1.LabelTenant] != t.Name {
			continue // not t's to hand back
		}
		deleted, err := c.deleteRoleBindings(ctx, ns)
		if err != nil {
			return false, err
		}
		if deleted {
			c.rbsDeleted.Store(ns, time.Now())
		}
		if at, ok := c.rbsDeleted.Load(ns); ok && time.Since(at.(time.Time)) < authorizerLag {
			done = false // look again once the authorizer has seen the deletes
			continue
		}
		c.rbsDeleted.Delete(ns)
		// The default-deny policy stays, the platform's now: the tenant's
		// pods left there are not opened to every namespace.
		if err := c.disownDenyAll(ctx, t, ns); err != nil {
			return false, err
		}
		for _, list := range handedBackKinds() {
			if err := c.reader.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{tenancyv1.LabelTenant: t.Name}); err != nil {
				return false, fmt.Errorf("releasing namespace %s: %w", ns, err)
			}
			if err := meta.EachListItem(list, func(o runtime.Object) error { return c.deleteExactly(ctx, o.(client.Object)) }); err != nil {
				return false, err
			}
		}
		if err := c.handBackNamespace(ctx, t, s, ns); err != nil {
			return false, err
		}
		c.event(t, "Normal", "NamespaceReleased", "namespace %s is no longer the tenant's: every RoleBinding there and the controller's objects are gone, its workloads stay", ns)
	}
	return done, nil
}

// roleBindingRounds bounds deleteRoleBindings' rounds.
const roleBindingRounds = 20

// deleteRoleBindings deletes every RoleBinding in ns until a list finds
// none, and reports whether it deleted any: one the owner creates while
// the first are deleted (with a binding not yet gone) is found by the next
// round. Still some after the last round is an error, retried.
func (c *Controller) deleteRoleBindings(ctx context.Context, ns string) (deleted bool, err error) {
	for range roleBindingRounds {
		var rbs rbacv1.RoleBindingList
		if err := c.reader.List(ctx, &rbs, client.InNamespace(ns)); err != nil {
			return deleted, fmt.Errorf("releasing namespace %s: %w", ns, err)
		}
		if len(rbs.Items) == 0 {
			return deleted, nil
		}
		for i := range rbs.Items {
			rb := &rbs.Items[i]
			if rb.DeletionTimestamp != nil && len(rb.Finalizers) > 0 {
				// RBAC ignores deletionTimestamp: a finalizer nothing
				// removes would keep the binding granting for good.
				if err := c.dropFinalizers(ctx, rb); err != nil {
					return true, err
				}
				continue
			}
			if err := c.deleteExactly(ctx, rb); err != nil {
				return true, err
			}
		}
		deleted = true
	}
	return true, fmt.Errorf("releasing namespace %s: RoleBindings are still being created or kept there after %d rounds of deleting them", ns, roleBindingRounds)
}

// dropFinalizers takes the finalizers off rb, a RoleBinding being deleted
// in a namespace the tenant leaves, at the resourceVersion read.
func (c *Controller) dropFinalizers(ctx context.Context, rb *rbacv1.RoleBinding) error {
	patch := client.MergeFromWithOptions(rb.DeepCopy(), client.MergeFromWithOptimisticLock{})
	rb.Finalizers = nil
	if err := c.client.Patch(ctx, rb, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing namespace %s: removing the finalizers of RoleBinding %s, which keep it granting: %w", rb.Namespace, rb.Name, err)
	}
	return nil
}

// disownDenyAll takes t's label and ownerReference off the default-deny
// NetworkPolicy of ns, so the hand-back keeps it.
func (c *Controller) disownDenyAll(ctx context.Context, t *tenancyv1.Tenant, ns string) error {
	np := &networkingv1.NetworkPolicy{}
	if err := c.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: PolicyDenyAll}, np); err != nil {
		return client.IgnoreNotFound(err)
	}
	if np.Labels[tenancyv1.LabelTenant] != t.Name {
		return nil
	}
	patch := client.MergeFromWithOptions(np.DeepCopy(), client.MergeFromWithOptimisticLock{})
	for k := range np.Labels {
		if k == tenancyv1.LabelTenant || (c.opts.Shard != nil && k == sharding.ShardLabel(c.opts.Shard.Ring)) {
			delete(np.Labels, k)
		}
	}
	np.OwnerReferences = slices.DeleteFunc(np.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == t.UID })
	if err := c.client.Patch(ctx, np, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing namespace %s: keeping NetworkPolicy %s: %w", ns, PolicyDenyAll, err)
	}
	return nil
}

// deleteExactly deletes the object o read, not one of its name made since.
func (c *Controller) deleteExactly(ctx context.Context, o client.Object) error {
	if err := c.client.Delete(ctx, o, client.Preconditions{UID: ptr.To(o.GetUID())}); err != nil && !apierrors.IsNotFound(err) {
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
	if c.opts.Shard != nil {
		delete(live.Labels, sharding.ShardLabel(c.opts.Shard.Ring)) // the deletion path's settings have no shard
	}
	delete(live.Annotations, tenancyv1.AnnotationActor)
	live.OwnerReferences = slices.DeleteFunc(live.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == t.UID })
	if err := c.client.Patch(ctx, live, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing namespace %s: %w", ns, err)
	}
	return nil
}
