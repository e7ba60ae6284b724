package tenancy

import (
	"context"
	"fmt"
	"strings"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"helm.sh/helm/v3/pkg/release"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"opctl.dev/opctl/pkg/operatorkit"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Finalize runs before operatorkit deletes or disconnects the namespaces
// and their objects. Delete uninstalls every release (and, if allowed,
// the shared CRDs no other Tenant uses); Orphan removes the Tenant's
// ownerReferences and labels from everything and leaves it all running.
func (c *Controller) Finalize(ctx context.Context, t *tenancyv1.Tenant, policy operatorkit.DeletionPolicy) (bool, error) {
	defer c.dropPlan(t)
	defer forgetQuota(t.Name)
	for _, ns := range t.Spec.Namespaces {
		defer c.drift.forget(ns)
	}
	if policy == operatorkit.DeletionOrphan {
		return true, c.disconnect(ctx, t)
	}
	ns := t.Spec.Namespaces[0]
	names, olm := map[string]bool{}, map[string]bool{}
	for _, op := range t.Spec.Operators {
		names[op.Name] = true
		olm[op.Name] = op.OLM != nil
	}
	for _, st := range t.Status.Operators {
		names[st.Name] = true
		olm[st.Name] = olm[st.Name] || st.OLM != nil
	}
	anyOLM := false
	for name := range names {
		if olm[name] {
			anyOLM = true
			if err := c.unsubscribe(ctx, t, ns, name); err != nil {
				return false, err
			}
			continue
		}
		if err := c.uninstall(ctx, t, ns, name); err != nil {
			return false, err
		}
	}
	if anyOLM {
		og := &operatorsv1.OperatorGroup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: OperatorGroupName}}
		if err := c.client.Delete(ctx, og); err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("deleting OperatorGroup %s/%s: %w", ns, og.Name, err)
		}
	}
	if c.opts.DeleteUnusedCRDs {
		if err := c.deleteUnusedCRDs(ctx, t); err != nil {
			return false, err
		}
	}
	return true, nil
}

// uninstall removes a release, once its records are in the controller's
// storage and its last revision names only the tenant's objects.
func (c *Controller) uninstall(ctx context.Context, t *tenancyv1.Tenant, ns, name string) error {
	unlock := c.helm.lock(ns, name)
	defer unlock()
	cfg, err := c.helm.action(t.Name, ns)
	if err != nil {
		return err
	}
	if _, err := c.helm.migrate(t.Name, ns, name); err != nil {
		return err
	}
	rel, err := last(cfg, name)
	if err != nil || rel == nil {
		return err
	}
	if err := c.scope(t, ns, name).verify(ctx, rel); err != nil {
		c.event(t, "Warning", ReasonReleaseTampered, "%v", err)
		return operatorkit.WithReason(ReasonReleaseTampered, err)
	}
	if _, err := c.timed("uninstall", func() (*release.Release, error) { return nil, c.helm.uninstall(cfg, name) }); err != nil {
		return fmt.Errorf("uninstalling %s from %s: %w", name, ns, err)
	}
	c.event(t, "Normal", "Uninstalled", "uninstalled %s from %s", name, ns)
	return nil
}

// unsubscribe deletes an OLM operator's Subscription and its CSVs; OLM's
// ownerReferences take the Deployment and the RBAC with the CSV.
func (c *Controller) unsubscribe(ctx context.Context, t *tenancyv1.Tenant, ns, name string) error {
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

// deleteUnusedCRDs deletes the shared CRDs t used that no other Tenant
// uses.
func (c *Controller) deleteUnusedCRDs(ctx context.Context, t *tenancyv1.Tenant) error {
	var tenants tenancyv1.TenantList
	if err := c.client.List(ctx, &tenants); err != nil {
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
			crd := &apiextensionsv1.CustomResourceDefinition{}
			crd.Name = name
			if err := c.client.Delete(ctx, crd); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting unused CRD %s: %w", name, err)
			}
			c.event(t, "Normal", "CRDDeleted", "deleted CRD %s, which no other tenant uses", name)
		}
	}
	return nil
}

// disconnect removes t's ownerReferences and tenant label from the
// namespaces and the objects in them.
func (c *Controller) disconnect(ctx context.Context, t *tenancyv1.Tenant) error {
	objs, err := c.Build(ctx, t)
	if err != nil {
		return err
	}
	ns := t.Spec.Namespaces[0]
	for _, op := range t.Spec.Operators {
		if op.OLM != nil {
			objs = append(objs, &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: op.Name}})
			continue
		}
		// The owners take the release over: its records go back to the
		// release namespace, where the helm CLI finds them.
		if moved, err := c.helm.handBack(t.Name, ns, op.Name); err != nil {
			return err
		} else if len(moved) > 0 {
			c.event(t, "Normal", "ReleaseRecordsHandedBack", "moved the records of release %s (revisions %v) back to namespace %s", op.Name, moved, ns)
		}
	}
	for _, desired := range objs {
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
		if labels := live.GetLabels(); labels[LabelTenant] == t.Name {
			delete(labels, LabelTenant)
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
