package tenancy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Red team 8. releaseLeaving holds a namespace the Tenant is leaving while
// a release of an operator of the spec is recorded or holds objects there,
// and the Tenant's deletion uninstalls the operators of its spec and its
// status. An operator the platform takes out of spec.operators is neither:
// Repair writes the status of the spec's operators only, so its release is
// never uninstalled nor upgraded, and never counted again. When the
// platform takes the operator and a namespace away together, the namespace
// is handed back at once while the release's ClusterRoleBinding still binds
// its ServiceAccount op (red team 5's route, by the operators), and the
// binding outlives the Tenant's deletion too.
func TestAttack8OperatorRemovedWithNamespace(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "oprm-" + suffix()
	a, b := name+"-a", name+"-b"
	createTenant(t, newTenant(name, []string{a, b}, writeChart(t, perNamespaceChart()), 1, "owner-"+name))
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

	// The platform takes operator kv and namespace b from the tenant.
	tn := &tenancyv1.Tenant{}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, tn); err != nil {
			return err
		}
		tn.Spec.Namespaces, tn.Spec.Operators = []string{a}, nil
		return cl.Update(ctx, tn)
	}); err != nil {
		t.Fatal(err)
	}
	waitHandedBack(t, b, 2*time.Minute)
	if got, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{}); err == nil {
		for _, s := range got.Subjects {
			if s.Namespace == b {
				t.Errorf("namespace %s handed back, yet ClusterRoleBinding %s of tenant %s still binds its ServiceAccount %s", b, crb, name, s.Name)
			}
		}
	}
	if _, err := c.Client.RbacV1().Roles(b).Get(ctx, "reader", metav1.GetOptions{}); err == nil {
		t.Errorf("namespace %s handed back, yet the release's Role %s/reader is still there", b, b)
	}
	sar, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:" + b + ":op", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + b},
		ResourceAttributes: &authzv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sar.Status.Allowed {
		t.Errorf("ServiceAccount op of namespace %s, handed back, holds tenant %s's cluster-wide binding (%s)", b, name, sar.Status.Reason)
	}

	// The Tenant's deletion does not uninstall the release either.
	if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	tenantGone(t, name)
	if _, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{}); err == nil {
		t.Errorf("ClusterRoleBinding %s outlives Tenant %s", crb, name)
	}
	if rel := fmt.Sprintf("sh.helm.release.v1.%s.%s.kv.v1", name, a); true {
		if _, err := c.Client.CoreV1().Secrets(tenancy.DefaultStorageNamespace).Get(ctx, rel, metav1.GetOptions{}); err == nil {
			t.Errorf("the record %s of Tenant %s's release outlives it in the controller's storage", rel, name)
		}
	}
}

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
