package tenancy_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcatalog"
	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Red team 9. A stored revision may name objects in a namespace that no
// longer exists (goneNamespaces), and a release recorded in a namespace
// that is no longer first is moved. Both ask only whether the namespace
// exists: the platform takes a namespace from Tenant A and deletes it
// while the controller is down, then gives the name to Tenant B (red team
// 5's route: names are reused). Once the controller is back the namespace
// exists again, B's, neither A's nor leaving nor gone:
//   - the second namespace: the deployed revision's Role there makes the
//     tamper check refuse A's upgrade and uninstall for good
//     (ReleaseTampered);
//   - the first namespace, where the release is recorded: moving it out
//     runs as A's actor in B's namespace and is refused, so A's release is
//     never installed in its new first namespace.
//
// Either way A's ClusterRoleBinding keeps binding ServiceAccount op of
// the name B now holds, so B's owner, creating op, gets the cluster-wide
// right of A's release, and A can never be deleted.
func TestAttack9NamespaceRecreatedWhileControllerDown(t *testing.T) {
	c := testcluster.Require(t, cluster)
	for _, first := range []bool{false, true} {
		t.Run(map[bool]string{false: "second", true: "first"}[first], func(t *testing.T) {
			ctx := context.Background()
			stop := startController(t, tenancy.Options{})
			name := "nsre-" + suffix()
			a, b := name+"-a", name+"-b"
			kept, taken := a, b
			if first {
				kept, taken = b, a
			}
			createTenant(t, newTenant(name, []string{a, b}, writeChart(t, perNamespaceChart()), 1, "owner-"+name))
			crb := releaseBinding(t, c, name, false)
			other := name + "-next"
			t.Cleanup(func() {
				unfinalize(name)
				unfinalize(other)
				for _, ns := range []string{a, b} {
					_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
				}
			})

			// While the controller is down the platform takes the
			// namespace from A, deletes it, and gives the name to B.
			takeWhileDown(t, stop, name, kept, taken)
			createTenant(t, newTenant(other, []string{taken}, "", 0, "owner-"+other))
			startController(t, tenancy.Options{})
			waitTenant(t, other, 2*time.Minute, "Tenant "+other+" ready", ready)

			if err := settled(ctx, name, crb, kept, 2*time.Minute); err != nil {
				t.Errorf("namespace %s taken from Tenant %s, deleted and given to Tenant %s while the controller was down: A's release does not settle in %s: %v", taken, name, other, kept, err)
			}
			if ok, why := reviewServiceAccount(t, c, taken, "op", delegation); ok {
				t.Errorf("ServiceAccount op of namespace %s, now Tenant %s's, holds Tenant %s's cluster-wide binding %s (%s)", taken, other, name, crb, why)
			}

			if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
				t.Fatal(err)
			}
			if err := gone(ctx, name, time.Minute); err != nil {
				t.Errorf("Tenant %s not deleted: %v", name, err)
			}
		})
	}
}

// settled waits up to within for the ClusterRoleBinding crb of Tenant
// name's release to bind ServiceAccount op of namespace kept alone, and
// says why not.
func settled(ctx context.Context, name, crb, kept string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		got := &rbacv1.ClusterRoleBinding{}
		err := cl.Get(ctx, client.ObjectKey{Name: crb}, got)
		if err == nil && len(got.Subjects) == 1 && got.Subjects[0].Namespace == kept {
			return nil
		}
		if time.Now().After(deadline) {
			tn := &tenancyv1.Tenant{}
			_ = cl.Get(ctx, client.ObjectKey{Name: name}, tn)
			return fmt.Errorf("binding %s: %v %v; operators %s; conditions %s", crb, err, got.Subjects, dump(tn.Status.Operators), dump(tn.Status.Conditions))
		}
		time.Sleep(time.Second)
	}
}

// Red team 9. An Orphan deletion leaves the operators running; since a
// release may hold a namespace the Tenant is leaving, it first brings
// them to the spec (settleLeaving: Check and Repair) and waits until
// nothing holds one. Whatever keeps that upgrade from happening keeps the
// Tenant from being deleted at all: here the chart can no longer be read
// (the platform retired it along with the Tenant), so Check fails on
// every attempt and the finalizer never comes off. Before, an Orphan
// deletion needed nothing of the chart.
func TestAttack9OrphanWithUnreadableChart(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	stop := startController(t, tenancy.Options{})
	name := "orphch-" + suffix()
	a, b := name+"-a", name+"-b"
	chart := writeChart(t, perNamespaceChart())
	tn := newTenant(name, []string{a, b}, chart, 1, "owner-"+name)
	tn.Spec.DeletionPolicy = operatorkit.DeletionOrphan
	createTenant(t, tn)
	crb := releaseBinding(t, c, name, false)
	t.Cleanup(func() {
		unfinalize(name)
		for _, ns := range []string{a, b} {
			_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})

	stop()
	setNamespaces(t, name, a)
	if err := os.RemoveAll(chart); err != nil {
		t.Fatal(err)
	}
	if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	startController(t, tenancy.Options{})
	// settleLeaving retries for a minute, under the controller's backoff.
	if err := gone(ctx, name, 3*time.Minute); err != nil {
		t.Errorf("Tenant %s (Orphan), its chart no longer readable, not deleted: %v", name, err)
	}
	if ok, why := reviewServiceAccount(t, c, b, "op", delegation); ok {
		if live := (&corev1.Namespace{}); cl.Get(ctx, client.ObjectKey{Name: b}, live) == nil && live.Labels[tenancyv1.LabelTenant] == "" {
			t.Errorf("namespace %s handed back while %s binds its ServiceAccount op (%s)", b, crb, why)
		}
	}
}

// Red team 9. The OLM side of TestAttack8OperatorRemovedWithNamespace,
// with the first namespace: the platform takes an OLM operator and the
// first namespace from the Tenant in one change. moveSubscriptions
// unsubscribes the operators the spec no longer names in the new first
// namespace only (unsubscribeDropped), and in the namespace that was first
// unsubscribes the operators the spec still names (removeFrom) and deletes
// the OperatorGroup. The dropped operator's Subscription and CSV stay in
// the old first namespace, which, no OperatorGroup of the Tenant's left
// there, is never handed back: the CSV, Failed without an OperatorGroup,
// has OLM write its RoleBinding again, the hand-back deletes it and looks
// again 2 s later, and so on for as long as the Subscription is there (seen:
// the Subscription and the Failed CSV still there after 3 minutes, the
// RoleBinding made 2 s before the look).
func TestAttack9OLMOperatorRemovedWithFirstNamespace(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	c.StartOLM(t)
	addr := testcatalog.Serve(t, publishSampleCatalog(t, "0.1.0"))
	startController(t, tenancy.Options{})
	name := "olmrmf-" + suffix()
	first, second := name, name+"-b"
	tn := olmTenant(name, "owner-"+name, tenancyv1.OLMSource{Catalog: tenancyv1.OLMCatalog{Address: addr}, Package: olmPackage, Channel: "stable"}, "0.1.0")
	tn.Spec.Namespaces = []string{first, second}
	createTenant(t, tn)
	t.Cleanup(func() {
		for _, ns := range []string{first, second} {
			_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})
	waitTenant(t, name, 4*time.Minute, "OLM tenant on 0.1.0", olmReady("0.1.0"))
	sub := &operatorsv1alpha1.Subscription{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: first, Name: "kv"}, sub); err != nil {
		t.Fatal(err)
	}
	csv := sub.Status.InstalledCSV
	if csv == "" {
		t.Fatalf("Subscription %s/kv names no installed CSV", first)
	}

	// The platform takes operator kv and the first namespace in one change.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live := &tenancyv1.Tenant{}
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, live); err != nil {
			return err
		}
		live.Spec.Namespaces, live.Spec.Operators = []string{second}, nil
		return cl.Update(ctx, live)
	}); err != nil {
		t.Fatal(err)
	}
	if err := handedBack(ctx, first, 3*time.Minute); err != nil {
		og := cl.Get(ctx, client.ObjectKey{Namespace: first, Name: tenancy.OperatorGroupName}, &operatorsv1.OperatorGroup{})
		live := &tenancyv1.Tenant{}
		_ = cl.Get(ctx, client.ObjectKey{Name: name}, live)
		var rbs rbacv1.RoleBindingList
		_ = cl.List(ctx, &rbs, client.InNamespace(first))
		var held []string
		for _, rb := range rbs.Items {
			held = append(held, rb.Name+"@"+rb.CreationTimestamp.UTC().Format(time.TimeOnly))
		}
		subErr := cl.Get(ctx, client.ObjectKey{Namespace: first, Name: "kv"}, &operatorsv1alpha1.Subscription{})
		liveCSV := &operatorsv1alpha1.ClusterServiceVersion{}
		csvErr := cl.Get(ctx, client.ObjectKey{Namespace: first, Name: csv}, liveCSV)
		t.Fatalf("namespace %s not handed back: %v; its OperatorGroup: %v; Subscription kv: %v; CSV %s: %v (phase %s, %s); RoleBindings now (%s): %v; Tenant conditions %s",
			first, err, og, subErr, csv, csvErr, liveCSV.Status.Phase, liveCSV.Status.Message, time.Now().UTC().Format(time.TimeOnly), held, dump(live.Status.Conditions))
	}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: first, Name: "kv"}, &operatorsv1alpha1.Subscription{}); err == nil {
		t.Errorf("namespace %s handed back, yet Tenant %s's Subscription kv, whose operator the spec no longer names, is still there", first, name)
	}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: first, Name: csv}, &operatorsv1alpha1.ClusterServiceVersion{}); err == nil {
		t.Errorf("namespace %s handed back, yet Tenant %s's CSV %s is still there", first, name, csv)
	}
}

// handedBack waits up to within for namespace ns to carry no tenant
// label, actor annotation or ownerReference, and says why not.
func handedBack(ctx context.Context, ns string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		live := &corev1.Namespace{}
		err := cl.Get(ctx, client.ObjectKey{Name: ns}, live)
		if err == nil && live.Labels[tenancyv1.LabelTenant] == "" && live.Annotations[tenancyv1.AnnotationActor] == "" && len(live.OwnerReferences) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("still the tenant's after %s: %v, labels %v", within, err, live.Labels)
		}
		time.Sleep(time.Second)
	}
}
