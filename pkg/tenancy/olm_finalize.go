package tenancy

import (
	"context"
	"fmt"
	"slices"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// remove unsubscribes each operator and deletes the OperatorGroup, in the
// first namespace and in every other namespace of t's, or that t is
// leaving, that holds an OperatorGroup of t's (it was first before).
func (c *olmBackend) remove(ctx context.Context, t *tenancyv1.Tenant, names []string) error {
	leaving, err := leavingNamespaces(ctx, c.reader, t)
	if err != nil {
		return err
	}
	for i, ns := range slices.Concat(t.Spec.Namespaces, leaving) {
		// Every Subscription of t's goes, wherever it is.
		if err := c.unsubscribeDropped(ctx, t, ns, nil); err != nil {
			return err
		}
		if i > 0 {
			has, err := c.hasOperatorGroup(ctx, ns)
			if err != nil {
				return err
			}
			if !has {
				continue
			}
		}
		if err := c.removeFrom(ctx, t, ns, names); err != nil {
			return err
		}
	}
	return nil
}

// unsubscribeDropped unsubscribes, in ns, each of t's Subscriptions that
// is not one of keep (every one for nil): its operator is gone from the spec, or uses another
// backend now. The Subscriptions are the controller's (labelled for t;
// owners may not write Subscriptions).
func (c *olmBackend) unsubscribeDropped(ctx context.Context, t *tenancyv1.Tenant, ns string, keep []string) error {
	var subs operatorsv1alpha1.SubscriptionList
	if err := c.owned.List(ctx, &subs, client.InNamespace(ns), client.MatchingLabels{tenancyv1.LabelTenant: t.Name}); err != nil {
		if meta.IsNoMatchError(err) {
			return nil
		}
		return fmt.Errorf("listing the Subscriptions of tenant %s in %s: %w", t.Name, ns, err)
	}
	for _, sub := range subs.Items {
		if slices.Contains(keep, sub.Name) {
			continue
		}
		if err := c.unsubscribe(ctx, t, ns, sub.Name); err != nil {
			return fmt.Errorf("unsubscribing %s, whose operator the spec no longer names: %w", sub.Name, err)
		}
	}
	return nil
}

// hasOperatorGroup reports whether ns holds the tenant OperatorGroup (from
// the cache: it is asked on every reconcile of a Tenant that was moved).
func (c *olmBackend) hasOperatorGroup(ctx context.Context, ns string) (bool, error) {
	err := c.owned.Get(ctx, client.ObjectKey{Namespace: ns, Name: OperatorGroupName}, &operatorsv1.OperatorGroup{})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return false, nil
	}
	return err == nil, err
}

// removeFrom unsubscribes each operator in ns, then deletes the
// OperatorGroup there.
func (c *olmBackend) removeFrom(ctx context.Context, t *tenancyv1.Tenant, ns string, names []string) error {
	for _, name := range names {
		if err := c.unsubscribe(ctx, t, ns, name); err != nil {
			return err
		}
	}
	og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: OperatorGroupName}}
	if err := c.client.Delete(ctx, og); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting OperatorGroup %s/%s: %w", ns, og.Name, err)
	}
	return nil
}

// disconnect leaves the Subscriptions to OLM and the owners: they are
// disconnected with the Tenant's other objects.
func (*olmBackend) disconnect(_ context.Context, t *tenancyv1.Tenant, names []string) ([]client.Object, error) {
	var objs []client.Object
	for _, name := range names {
		objs = append(objs, &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: t.Spec.Namespaces[0], Name: name}})
	}
	return objs, nil
}

// unsubscribe deletes an OLM operator's Subscription and its CSVs; OLM's
// ownerReferences take the Deployment and the RBAC with the CSV.
func (c *olmBackend) unsubscribe(ctx context.Context, t *tenancyv1.Tenant, ns, name string) error {
	sub := &operatorsv1alpha1.Subscription{}
	if err := c.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sub); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if err := c.client.Delete(ctx, sub); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Subscription %s/%s: %w", ns, name, err)
	}
	for _, csv := range []string{sub.Status.InstalledCSV, sub.Status.CurrentCSV} {
		if csv == "" {
			continue
		}
		obj := &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: csv}}
		if err := c.client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting CSV %s/%s: %w", ns, csv, err)
		}
	}
	c.event(t, "Normal", "Unsubscribed", "deleted Subscription %s and CSV %s from %s", name, sub.Status.InstalledCSV, ns)
	return nil
}
