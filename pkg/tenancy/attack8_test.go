package tenancy_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Red team 8. The Orphan deletion policy hands the records of each
// release back to the owners (Reconciler.HandBack), from the first of
// spec.namespaces only. The platform reorders the namespaces and deletes
// the Tenant (Orphan) before the release was moved (here: while the
// controller is down): the release recorded in a, the old first, is not
// handed back. Its records stay in the controller's storage for good,
// under a Tenant that is gone, and the owners, promised the release, have
// no record of it to upgrade or uninstall (its ClusterRoleBinding and
// webhooks only the platform can remove).
func TestAttack8OrphanReorderedKeepsRecords(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	stop := startController(t, tenancy.Options{})
	name := "nsorro-" + suffix()
	a, b := name+"-a", name+"-b"
	tn := newTenant(name, []string{a, b}, writeChart(t, perNamespaceChart()), 1, "owner-"+name)
	tn.Spec.DeletionPolicy = operatorkit.DeletionOrphan
	createTenant(t, tn)
	crb := "opctl." + name + ".kv.delegate"
	testcluster.Eventually(t, 2*time.Minute, "the release's ClusterRoleBinding installed", func(ctx context.Context) error {
		_, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = c.Client.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb, metav1.DeleteOptions{})
		for _, ns := range []string{a, b} {
			_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})

	stop()
	setNamespaces(t, name, b, a)
	if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	startController(t, tenancy.Options{})
	tenantGone(t, name)
	if n, err := storedRecords(ctx, name); err != nil || n != 0 {
		t.Errorf("records of Tenant %s's release left in the controller's storage after its Orphan deletion: %d, %v", name, n, err)
	}
	na, _ := releaseSecrets(ctx, a)
	nb, _ := releaseSecrets(ctx, b)
	if na+nb == 0 {
		t.Errorf("the release of Tenant %s, orphaned, has no record in %s or %s for its owners", name, a, b)
	}
}
