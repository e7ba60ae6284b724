package tenancy_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	releaserecords "opctl.dev/opctl/pkg/tenancy/internal/helmrelease/records"
)

// Red team 7. A Tenant's releases are recorded in its first namespace,
// and moveReleases moves them only out of a namespace the Tenant is
// leaving. spec.namespaces is a set (listType=set): the platform may
// reorder it, or take the first namespace away and later give it back in
// front. Then the first namespace changes while no namespace leaves: the
// release recorded in the old first one, a here, is never looked at
// again. The install in the new first namespace, b, is refused (its
// ClusterRoleBinding is owned by the release in a: ReleaseTampered), and at the Tenant's
// deletion uninstallAll looks in the first namespace and the leaving ones
// only: the release in a is never uninstalled. Its ClusterRoleBinding,
// which binds ServiceAccount op of both namespaces, outlives the Tenant
// and its namespaces, for whoever gets their names next (red team 5's
// route), and its records stay in the controller's storage.
func TestAttack7FirstNamespaceReordered(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "nsreorder-" + suffix()
	a, b := name+"-a", name+"-b"
	createTenant(t, newTenant(name, []string{a, b}, writeChart(t, perNamespaceChart()), 1, "owner-"+name))
	crb := releaseBinding(t, c, name, false)
	t.Cleanup(func() {
		for _, ns := range []string{a, b} {
			_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})

	// The platform lists the same namespaces in another order: b first.
	tn := setNamespaces(t, name, b, a)
	waitTenant(t, name, 2*time.Minute, "the reordered spec observed", func(tn *tenancyv1.Tenant) error {
		if tn.Status.ObservedGeneration < tn.Generation {
			return fmt.Errorf("generation %d observed %d", tn.Generation, tn.Status.ObservedGeneration)
		}
		return nil
	})
	// Give it a few passes, then report what the Tenant says.
	time.Sleep(10 * time.Second)
	now := &tenancyv1.Tenant{}
	if err := cl.Get(ctx, client.ObjectKey{Name: name}, now); err != nil {
		t.Fatal(err)
	}
	t.Logf("after the reorder: conditions %s operators %s", dump(now.Status.Conditions), dump(now.Status.Operators))

	if err := cl.Delete(ctx, tn); err != nil {
		t.Fatal(err)
	}
	tenantGone(t, name)
	if got, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{}); err == nil {
		t.Errorf("ClusterRoleBinding %s outlives Tenant %s, binding %s", crb, name, dump(got.Subjects))
	}
	// Whoever gets the name a next, and makes ServiceAccount op there,
	// holds the old release's cluster-wide rights.
	if ok, why := reviewServiceAccount(t, c, a, "op", delegation); ok {
		t.Errorf("ServiceAccount op of namespace %s holds deleted Tenant %s's cluster-wide binding (%s)", a, name, why)
	}
	var records corev1.SecretList
	if err := cl.List(ctx, &records, client.InNamespace(tenancy.DefaultStorageNamespace), client.MatchingLabels{releaserecords.LabelRecordTenant: name}); err != nil {
		t.Fatal(err)
	}
	for _, s := range records.Items {
		t.Errorf("release record %s (namespace %s) outlives Tenant %s", s.Name, s.Labels[releaserecords.LabelRecordNamespace], name)
	}
}

// Red team 7. The hand-back lists the RoleBindings of the namespace once
// and deletes what it listed, each under its UID. The owner stays admin
// there until the last binding that grants it admin is deleted (the
// Tenant's tenant-owners, and any binding of admin the owner made, which
// may sort last), and bindings are deleted one by one in name order: a
// binding the owner creates after the list and before that last delete
// is never seen, and survives the hand-back. The owner widens the window
// with bindings of its own that sort first (the quota allows about 50),
// and its creates start to succeed exactly when the deletes begin to free
// the quota. The owner stays admin in a namespace no guardrail watches,
// and in the next tenant's once the platform gives it on.
func TestAttack7HandBackRaceKeepsOwnerBinding(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "nsrace-" + suffix()
	a, b := name+"-a", name+"-b"
	owner := "owner-" + name
	createTenant(t, newTenant(name, []string{a, b}, "", 0, owner))
	waitTenant(t, name, 2*time.Minute, "the tenant ready", ready)
	t.Cleanup(func() { _ = c.Client.CoreV1().Namespaces().Delete(context.Background(), b, metav1.DeleteOptions{}) })
	oc := kubernetes.NewForConfigOrDie(c.As(owner))
	admin := func(n string) *rbacv1.RoleBinding {
		return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: n},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
			Subjects: []rbacv1.Subject{rbacSubject(owner)}}
	}
	testcluster.Eventually(t, time.Minute, "the owner's own admin binding in "+b, func(ctx context.Context) error {
		_, err := oc.RbacV1().RoleBindings(b).Create(ctx, admin("zzzz-keep"), metav1.CreateOptions{})
		return err
	})
	// Padding, deleted first.
	for i := range 30 {
		if _, err := oc.RbacV1().RoleBindings(b).Create(ctx, admin(fmt.Sprintf("aaaa-pad-%02d", i)), metav1.CreateOptions{}); err != nil {
			t.Logf("padding binding %d: %v", i, err)
			break
		}
	}
	// The owner keeps creating bindings until it is no longer allowed.
	var created atomic.Int32
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := oc.RbacV1().RoleBindings(b).Create(ctx, admin(fmt.Sprintf("zzzz-late-%04d", i)), metav1.CreateOptions{}); err == nil {
				created.Add(1)
				t.Logf("%s created zzzz-late-%04d", time.Now().Format("15:04:05.000"), i)
			} else if i%50 == 0 {
				t.Logf("%s attempt %d: %v", time.Now().Format("15:04:05.000"), i, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()

	// The platform takes namespace b from the tenant.
	time.Sleep(time.Second)
	t.Logf("%s removing %s", time.Now().Format("15:04:05.000"), b)
	setNamespaces(t, name, a)
	waitHandedBack(t, b, 2*time.Minute)
	t.Logf("%s handed back", time.Now().Format("15:04:05.000"))
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("the owner created %d bindings in %s while it raced", created.Load(), b)

	var left rbacv1.RoleBindingList
	if err := cl.List(ctx, &left, client.InNamespace(b)); err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, rb := range left.Items {
		kept = append(kept, rb.Name+" ("+rb.RoleRef.Name+")")
	}
	if len(kept) > 0 {
		t.Errorf("namespace %s handed back, yet %d RoleBindings the owner made are still there: %v", b, len(kept), kept)
	}
	if ok, why := review(t, c, owner, nil, authzv1.ResourceAttributes{Namespace: b, Verb: "create", Resource: "secrets"}); ok {
		t.Errorf("namespace %s handed back, yet tenant %s's owner may still create Secrets there (%s)", b, name, why)
	}
}
