package tenancy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcatalog"
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
	crb := releaseBinding(t, c, name, false)
	t.Cleanup(func() {
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

// Red team 8. A namespace is "leaving" while it still exists with the
// Tenant's label: only then is a release recorded there moved, and may
// the stored revision name objects there. The platform takes a namespace
// from the Tenant and deletes it while the controller is down (an upgrade
// of the controller, a leader change): once the controller is back, the
// namespace is neither in the spec nor leaving.
//   - the second namespace, b: the deployed revision's Role in b makes the
//     tamper check refuse the upgrade for good (ReleaseTampered), and the
//     uninstall at the Tenant's deletion the same way;
//   - the first namespace, a, where the release is recorded: the release
//     is never looked at again (formerReleaseNamespaces lists the
//     labelled ones), and its install in b is refused, its
//     ClusterRoleBinding being the old release's.
//
// Either way the release's ClusterRoleBinding keeps ServiceAccount op of
// the deleted namespace (and its webhooks would keep selecting it), for
// whoever is given the name next (red team 5's route), and outlives the
// Tenant.
func TestAttack8NamespaceDeletedWhileControllerDown(t *testing.T) {
	c := testcluster.Require(t, cluster)
	for _, first := range []bool{false, true} {
		t.Run(map[bool]string{false: "second", true: "first"}[first], func(t *testing.T) {
			ctx := context.Background()
			stop := startController(t, tenancy.Options{})
			name := "nsdel-" + suffix()
			a, b := name+"-a", name+"-b"
			kept, taken := a, b
			if first {
				kept, taken = b, a
			}
			createTenant(t, newTenant(name, []string{a, b}, writeChart(t, perNamespaceChart()), 1, "owner-"+name))
			crb := releaseBinding(t, c, name, false)
			t.Cleanup(func() {
				unfinalize(name)
				for _, ns := range []string{a, b} {
					_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
				}
			})

			takeWhileDown(t, stop, name, kept, taken)
			startController(t, tenancy.Options{})

			// The release settles: its binding narrowed to the namespace
			// kept, or the release refused.
			var st tenancyv1.OperatorStatus
			testcluster.Eventually(t, 2*time.Minute, "the release in "+kept+" alone, or refused", func(ctx context.Context) error {
				got, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{})
				if err == nil && len(got.Subjects) == 1 && got.Subjects[0].Namespace == kept {
					return nil
				}
				tn := &tenancyv1.Tenant{}
				if err := cl.Get(ctx, client.ObjectKey{Name: name}, tn); err != nil {
					return err
				}
				if len(tn.Status.Operators) == 1 && tn.Status.Operators[0].Reason != "" {
					st = tn.Status.Operators[0]
					return nil
				}
				return fmt.Errorf("binding %v, operators %s", err, dump(tn.Status.Operators))
			})
			if st.Reason != "" {
				t.Errorf("namespace %s taken from Tenant %s and deleted while the controller was down: the release is refused (%s: %s)", taken, name, st.Reason, st.LastError)
			}
			sar, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
				User: "system:serviceaccount:" + taken + ":op", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + taken},
				ResourceAttributes: &authzv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if sar.Status.Allowed {
				t.Errorf("ServiceAccount op of namespace %s, taken from Tenant %s and deleted, holds its cluster-wide binding for whoever gets the name next (%s)", taken, name, sar.Status.Reason)
			}

			// The Tenant's deletion removes the release.
			if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
				t.Fatal(err)
			}
			if err := gone(ctx, name, time.Minute); err != nil {
				t.Errorf("Tenant %s not deleted: %v", name, err)
			} else if _, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{}); err == nil {
				t.Errorf("ClusterRoleBinding %s outlives Tenant %s", crb, name)
			}
		})
	}
}

// gone waits up to within for Tenant name to be deleted, and says why not.
func gone(ctx context.Context, name string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		tn := &tenancyv1.Tenant{}
		err := cl.Get(ctx, client.ObjectKey{Name: name}, tn)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still there after %s: %v; conditions %s", within, err, dump(tn.Status.Conditions))
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Red team 8. The Orphan deletion policy leaves the releases running, and
// hands back the namespaces the Tenant is leaving (handBackLeaving) without
// asking whether a release still holds objects there, as releaseLeaving
// does. The platform takes namespace b from the Tenant and deletes the
// Tenant (Orphan) before the upgrade to the remaining namespace ran (here:
// while the controller is down): b is handed back, unlabelled, while the
// release's ClusterRoleBinding binds its ServiceAccount op and the
// release's Role stays there, for whoever is given b next.
func TestAttack8OrphanHandsBackHeldNamespace(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	stop := startController(t, tenancy.Options{})
	name := "nsorph-" + suffix()
	a, b := name+"-a", name+"-b"
	tn := newTenant(name, []string{a, b}, writeChart(t, perNamespaceChart()), 1, "owner-"+name)
	tn.Spec.DeletionPolicy = operatorkit.DeletionOrphan
	createTenant(t, tn)
	releaseBinding(t, c, name, false)
	t.Cleanup(func() {
		for _, ns := range []string{a, b} {
			_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})

	stop()
	setNamespaces(t, name, a)
	if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	startController(t, tenancy.Options{})
	tenantGone(t, name)
	waitHandedBack(t, b, time.Minute)
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
		t.Errorf("ServiceAccount op of namespace %s, handed back at Tenant %s's Orphan deletion, holds its cluster-wide binding (%s)", b, name, sar.Status.Reason)
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
	releaseBinding(t, c, name, false)
	t.Cleanup(func() {
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

// nsGone waits until namespace ns is deleted.
func nsGone(t *testing.T, ns string) {
	t.Helper()
	testcluster.Eventually(t, 2*time.Minute, "namespace "+ns+" gone", func(ctx context.Context) error {
		if err := cl.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
}

// unfinalize deletes Tenant name without waiting for its finalizer.
func unfinalize(name string) {
	ctx := context.Background()
	_ = cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}})
	tn := &tenancyv1.Tenant{}
	if cl.Get(ctx, client.ObjectKey{Name: name}, tn) == nil {
		tn.Finalizers = nil
		_ = cl.Update(ctx, tn)
	}
}

// The OLM side of TestAttack8OperatorRemovedWithNamespace: an OLM
// operator taken out of spec.operators is unsubscribed (its Subscription
// and CSV deleted, OLM's ownerReferences take its Deployment and RBAC),
// not left running with the grants OLM gave it.
func TestOLMOperatorRemovedUnsubscribed(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	c.StartOLM(t)
	addr := testcatalog.Serve(t, publishSampleCatalog(t, "0.1.0"))
	startController(t, tenancy.Options{})
	name := "olmrm-" + suffix()
	tn := olmTenant(name, "owner-"+name, tenancyv1.OLMSource{Catalog: tenancyv1.OLMCatalog{Address: addr}, Package: olmPackage, Channel: "stable"}, "0.1.0")
	createTenant(t, tn)
	waitTenant(t, name, 4*time.Minute, "OLM tenant on 0.1.0", olmReady("0.1.0"))
	sub := &operatorsv1alpha1.Subscription{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: tn.Spec.Operators[0].Name}, sub); err != nil {
		t.Fatal(err)
	}
	csv := sub.Status.InstalledCSV
	if csv == "" {
		t.Fatalf("Subscription %s/%s names no installed CSV", name, sub.Name)
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := &tenancyv1.Tenant{}
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, live); err != nil {
			return err
		}
		live.Spec.Operators = nil
		return cl.Update(ctx, live)
	}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, 2*time.Minute, "the Subscription and CSV of the operator taken out of the spec deleted", func(ctx context.Context) error {
		if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: sub.Name}, &operatorsv1alpha1.Subscription{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("Subscription %s: %v", sub.Name, err)
		}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: csv}, &operatorsv1alpha1.ClusterServiceVersion{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("CSV %s: %v", csv, err)
		}
		return nil
	})
}
