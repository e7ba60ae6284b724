package tenancy_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Red team 12. A release rolled back after a failed upgrade is held while
// status.operators[].failedValues is the digest of the spec's values; but
// rollback records the values of the revision it rolls back from, and
// when the first rollback failed (as red team 11 showed an owner can make
// it), the second rolls back from that failed rollback, whose values are
// the deployed revision's, not those the upgrade failed with. The spec's
// values then never match failedValues, the release is never held, and
// the controller upgrades again at once, fails on the owner's quota,
// fails the rollback, rolls back again, and so on with no backoff while
// the owner keeps its quota full: three Helm actions and three release
// records a round (MaxHistory prunes as many), the release's
// ClusterRoleBinding created and deleted each round, Warning Events.
// Tenant A runs widenChart on a; its owner fills count/services there;
// the platform gives A namespace b and nothing else changes.
func TestAttack12FailedRollbackUpgradesInALoop(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name, a, b, _ := widenTenant(t, c, "rbloop-")
	owner := "owner-" + name
	t.Logf("owner created %d Services in %s", fillServices(t, c, owner, a), a)

	setNamespaces(t, name, a, b)
	tn := waitTenant(t, name, 3*time.Minute, "the failed upgrade rolled back", func(tn *tenancyv1.Tenant) error {
		for _, op := range tn.Status.Operators {
			if op.FailedVersion != "" && op.Revision >= 4 {
				return nil
			}
		}
		return fmt.Errorf("operators %s", dump(tn.Status.Operators))
	})
	first := tn.Status.Operators[0]
	t.Logf("rolled back: revision %d, failedValues %q", first.Revision, first.FailedValues)

	// Nothing changes now: neither the spec nor the owner's quota. A held
	// release makes no new revision; the loop made nine in two seconds.
	if revisionReached(ctx, name, first.Revision+9, time.Minute) {
		live := &tenancyv1.Tenant{}
		_ = cl.Get(ctx, client.ObjectKey{Name: name}, live)
		op := live.Status.Operators[0]
		for v := op.Revision - 5; v <= op.Revision; v++ {
			if v < 1 {
				continue
			}
			key := fmt.Sprintf("sh.helm.release.v1.%s.%s.%s.v%d", name, a, "kv", v)
			if _, gerr := c.Client.CoreV1().Secrets(tenancy.DefaultStorageNamespace).Get(ctx, key, metav1.GetOptions{}); gerr == nil {
				rel := storedRelease(t, name, a, "kv", v)
				t.Logf("revision %d: %s: %s", v, rel.Info.Status, rel.Info.Description)
			}
		}
		// How hot: revisions and this process's CPU (the controller runs
		// in it) over 30 s more.
		var before, after syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		time.Sleep(30 * time.Second)
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		later := &tenancyv1.Tenant{}
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, later); err == nil && len(later.Status.Operators) > 0 {
			cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
			t.Logf("30 s later: revision %d (%d more), process CPU %s", later.Status.Operators[0].Revision, later.Status.Operators[0].Revision-op.Revision, cpu)
		}
		t.Errorf("with the spec and the owner's quota unchanged, the release went on from revision %d to %d (failedValues %q, spec's values digest differs): "+
			"upgraded, failed and rolled back again and again instead of being held; operators %s", first.Revision, op.Revision, op.FailedValues, dump(live.Status.Operators))
	}
}

// revisionReached reports whether an operator of Tenant name reaches
// status revision rev within d.
func revisionReached(ctx context.Context, name string, rev int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		live := &tenancyv1.Tenant{}
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, live); err == nil {
			for _, op := range live.Status.Operators {
				if op.Revision >= rev {
					return true
				}
			}
		}
		time.Sleep(time.Second)
	}
	return false
}

// Red team 12. Helm's upgrade keeps an object the new revision drops when
// the live object says helm.sh/resource-policy: keep (kube.Client.Update
// reads the annotation from the cluster), the documented way to keep a
// PersistentVolumeClaim or a ConfigMap of data past a chart change. The
// sweep that follows (deleteLeftovers) reads the annotation from the
// earlier revision's manifest only, and deletes the object Helm kept.
// Tenant A runs widenChart on a, which writes ConfigMap single-namespace
// there; it is annotated to be kept (as the platform, since the
// guardrail tenant-managed-objects stops owners from annotating a
// ConfigMap of the release; owners can annotate the release's objects of
// kinds that guardrail does not list, such as the operators' own kinds);
// the platform gives A namespace b, whose render drops the ConfigMap.
func TestAttack12SweepDeletesKeptObject(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name, a, b, crb := widenTenant(t, c, "keep-")
	patch := []byte(`{"metadata":{"annotations":{"helm.sh/resource-policy":"keep"}}}`)
	if _, err := c.Client.CoreV1().ConfigMaps(a).Patch(ctx, "single-namespace", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	setNamespaces(t, name, a, b)
	testcluster.Eventually(t, 2*time.Minute, "the upgrade to a and b deployed", func(ctx context.Context) error {
		if _, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{}); err != nil {
			return err
		}
		live := &tenancyv1.Tenant{}
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, live); err != nil {
			return err
		}
		for _, op := range live.Status.Operators {
			if op.Revision >= 2 {
				return nil
			}
		}
		return fmt.Errorf("operators %s", dump(live.Status.Operators))
	})
	rel := storedRelease(t, name, a, "kv", 2)
	t.Logf("revision 2: %s: %s", rel.Info.Status, rel.Info.Description)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		_, err := c.Client.CoreV1().ConfigMaps(a).Get(ctx, "single-namespace", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			t.Errorf("ConfigMap %s/single-namespace, annotated helm.sh/resource-policy: keep, which Helm's upgrade to revision 2 kept, deleted by the controller after it", a)
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
}

// widenTenant creates Tenant prefix+suffix() on its namespace -a with
// widenChart and owner "owner-"+name, cleans it, its namespaces -a and -b
// and its ClusterRoleBinding up after the test, and waits for the
// release's ConfigMap single-namespace. It returns the Tenant's name, the
// namespaces and the binding's name.
func widenTenant(t *testing.T, c *testcluster.Cluster, prefix string) (name, a, b, crb string) {
	t.Helper()
	name = prefix + suffix()
	a, b = name+"-a", name+"-b"
	crb = "opctl." + name + ".kv.delegate"
	createTenant(t, newTenant(name, []string{a}, writeChart(t, widenChart()), 1, "owner-"+name))
	t.Cleanup(func() {
		unfinalize(name)
		_ = c.Client.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb, metav1.DeleteOptions{})
		for _, ns := range []string{a, b} {
			_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})
	testcluster.Eventually(t, 2*time.Minute, "the single-namespace release installed", func(ctx context.Context) error {
		_, err := c.Client.CoreV1().ConfigMaps(a).Get(ctx, "single-namespace", metav1.GetOptions{})
		return err
	})
	return name, a, b, crb
}
