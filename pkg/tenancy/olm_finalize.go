package tenancy

import (
	"context"
	"fmt"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// remove unsubscribes each operator, then deletes the OperatorGroup.
func (c *olmBackend) remove(ctx context.Context, t *tenancyv1.Tenant, names []string) error {
	ns := t.Spec.Namespaces[0]
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
