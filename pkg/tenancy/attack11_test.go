package tenancy_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// widenChart is modeChart without its webhook and with what many
// operators add when they watch several namespaces: a metrics Service in
// their own namespace. Watching one namespace it writes a ConfigMap
// there instead; watching several, it binds op of each cluster-wide.
func widenChart() map[string]string {
	files := map[string]string{}
	maps.Copy(files, modeChart("unused.example.com", "unused"))
	delete(files, "templates/vwc.yaml")
	files["templates/svc.yaml"] = "{{- if gt (len .Values.watchNamespaces) 1 }}\napiVersion: v1\nkind: Service\nmetadata:\n  name: multi\n" +
		"spec:\n  selector:\n    app: multi\n  ports:\n  - port: 8080\n{{- end }}\n"
	return files
}

// freeServices has owner delete the Services fillServices created in ns.
func freeServices(t *testing.T, c *testcluster.Cluster, owner, ns string) {
	t.Helper()
	oc := kubernetes.NewForConfigOrDie(c.As(owner))
	for i := 0; ; i++ {
		if err := oc.CoreV1().Services(ns).Delete(context.Background(), fmt.Sprintf("filler-%d", i), metav1.DeleteOptions{}); apierrors.IsNotFound(err) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// fillServices has owner create Services in ns until the tenant's quota
// refuses the next one.
func fillServices(t *testing.T, c *testcluster.Cluster, owner, ns string) int {
	t.Helper()
	oc := kubernetes.NewForConfigOrDie(c.As(owner))
	for i := 0; ; i++ {
		_, err := oc.CoreV1().Services(ns).Create(context.Background(), &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("filler-%d", i)},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(80)}}},
		}, metav1.CreateOptions{})
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "exceeded quota") {
			return i
		}
		if err != nil {
			t.Fatalf("owner %s creating Service %d in %s: %v", owner, i, ns, err)
		}
		if i > 200 {
			t.Fatalf("owner %s created 200 Services in %s without reaching a quota", owner, ns)
		}
	}
}

// Red team 11. liveRevisions counts the revisions from the last deployed
// one on, but a failed upgrade whose rollback failed too falls behind the
// revision the second rollback deploys, with the objects it created.
// Tenant A runs widenChart on namespace a; its owner fills
// count/services there. The platform gives A namespace b: the upgrade
// creates the ClusterRoleBinding of op in a and b, then the quota refuses
// its Service. The rollback to the deployed revision fails in Helm ("no
// ConfigMap with the name single-namespace found": the failed upgrade
// dropped it from its manifest and did not delete it), which supersedes
// the failed upgrade; the next rollback, from the failed rollback (a copy
// of the deployed revision), succeeds and deletes nothing. No revision
// from the last deployed on names the binding: when the platform takes b
// back it is handed back at once with the binding of its ServiceAccount
// op in place, for whoever gets b next, and the Tenant's deletion leaves
// the binding behind.
func TestAttack11FailedRollbackOrphansBinding(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name, a, b, crb := widenTenant(t, c, "rbfail-")
	owner := "owner-" + name
	t.Logf("owner created %d Services in %s", fillServices(t, c, owner, a), a)

	// The platform gives A namespace b. The upgrade fails on the owner's
	// quota after creating the binding, and is rolled back.
	setNamespaces(t, name, a, b)
	testcluster.Eventually(t, 2*time.Minute, "the upgrade's ClusterRoleBinding created", func(ctx context.Context) error {
		_, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{})
		return err
	})
	tn := waitTenant(t, name, 3*time.Minute, "the failed upgrade rolled back", func(tn *tenancyv1.Tenant) error {
		for _, op := range tn.Status.Operators {
			if op.FailedVersion != "" && op.Revision >= 4 {
				return nil
			}
		}
		return fmt.Errorf("operators %s", dump(tn.Status.Operators))
	})
	t.Logf("operators %s", dump(tn.Status.Operators))
	for v := 1; v <= 4; v++ {
		rel := storedRelease(t, name, a, "kv", v)
		t.Logf("revision %d: %s: %s", v, rel.Info.Status, rel.Info.Description)
	}

	// The platform takes b back.
	setNamespaces(t, name, a)
	if err := handedBack(ctx, b, 2*time.Minute); err == nil {
		if ok, why := reviewServiceAccount(t, c, b, "op", delegation); ok {
			t.Errorf("namespace %s handed back while the release's %s still binds its ServiceAccount op (%s)", b, crb, why)
		}
	} else {
		t.Logf("namespace %s not handed back: %v", b, err)
	}

	if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	if err := gone(ctx, name, 2*time.Minute); err != nil {
		t.Fatalf("Tenant %s not deleted: %v", name, err)
	}
	if live, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{}); err == nil {
		t.Errorf("Tenant %s deleted, the ClusterRoleBinding %s its failed upgrade created is left: subjects %v", name, crb, live.Subjects)
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	live := &corev1.Namespace{}
	if err := cl.Get(ctx, client.ObjectKey{Name: b}, live); err == nil {
		t.Logf("namespace %s labels %v", b, live.Labels)
	}
}

// Red team 11. A namespace the platform takes from a Tenant stays the
// tenant's for good once one upgrade failed. As in red team 10, the owner
// fills count/configmaps in a and the platform takes b: the upgrade to a
// alone fails on the quota, and its rollback to the deployed revision is
// refused (it names objects in b, now leaving), so b is held, rightly,
// while the deployed revision's objects are there. But the owner then
// deletes its ConfigMaps, and nothing ever tries again: the release stays
// failed (every reconcile refuses the same rollback), b keeps the
// tenant's label, its owners' admin and the release's binding of its
// ServiceAccount op, until the Tenant is deleted.
func TestAttack11FailedUpgradeHoldsNamespaceForGood(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "holdfor-" + suffix()
	a, b, _ := quotaFullTenant(t, c, name, "")
	owner := "owner-" + name

	setNamespaces(t, name, a)
	waitTenant(t, name, 2*time.Minute, "the upgrade to namespace a alone failed", func(tn *tenancyv1.Tenant) error {
		for _, op := range tn.Status.Operators {
			if strings.Contains(op.LastError, "exceeded quota") || op.Reason == tenancyv1.ReasonReleaseTampered {
				return nil
			}
		}
		return fmt.Errorf("operators %s", dump(tn.Status.Operators))
	})
	// The owner frees its quota: the upgrade would pass now.
	oc := kubernetes.NewForConfigOrDie(c.As(owner))
	if err := oc.CoreV1().ConfigMaps(a).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: "metadata.name!=single-namespace"}); err != nil {
		t.Fatal(err)
	}
	var cms corev1.ConfigMapList
	if err := cl.List(ctx, &cms, client.InNamespace(a)); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d ConfigMaps left in %s", len(cms.Items), a)
	if err := handedBack(ctx, b, 3*time.Minute); err != nil {
		tn := &tenancyv1.Tenant{}
		_ = cl.Get(ctx, client.ObjectKey{Name: name}, tn)
		ok, why := review(t, c, owner, nil, authzv1.ResourceAttributes{Namespace: b, Verb: "create", Resource: "secrets"})
		t.Errorf("namespace %s, taken from Tenant %s, not handed back 3 minutes after its owner freed the quota: %v; the owner may create Secrets there: %v (%s); operators %s",
			b, name, err, ok, why, dump(tn.Status.Operators))
	}
}

// Red team 11. A release rolled back after a failed upgrade is held until
// the chart's version changes (releaseState compares FailedVersion with the
// spec's chart version alone), so no later change of the namespaces, which
// changes only the values, is ever installed. Tenant A on a and b runs
// perNamespaceChart with a ConfigMap in its own namespace for each
// watched one; its owner fills count/configmaps in a. The platform adds c:
// the upgrade fails on the quota and is rolled back. The owner frees its
// quota and the platform takes b: the release stays held on the revision
// of a and b, which holds b, so b stays the tenant's with its owners'
// admin and the binding of its ServiceAccount op.
func TestAttack11HeldReleaseIgnoresNamespaceChanges(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "heldns-" + suffix()
	a, b, cc := name+"-a", name+"-b", name+"-c"
	owner := "owner-" + name
	files := perNamespaceChart()
	files["templates/watch.yaml"] = "{{- range .Values.watchNamespaces }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: watch-{{ . }}\ndata:\n  namespace: {{ . }}\n{{- end }}\n"
	createTenant(t, newTenant(name, []string{a, b}, writeChart(t, files), 1, owner))
	crb := releaseBinding(t, c, name, false)
	t.Cleanup(func() {
		unfinalize(name)
		for _, ns := range []string{a, b, cc} {
			_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})
	t.Logf("owner created %d ConfigMaps in %s", fillConfigMaps(t, c, owner, a), a)

	setNamespaces(t, name, a, b, cc)
	waitTenant(t, name, 2*time.Minute, "the upgrade to a, b and c rolled back", func(tn *tenancyv1.Tenant) error {
		for _, op := range tn.Status.Operators {
			if op.FailedVersion != "" {
				return nil
			}
		}
		return fmt.Errorf("operators %s", dump(tn.Status.Operators))
	})
	oc := kubernetes.NewForConfigOrDie(c.As(owner))
	if err := oc.CoreV1().ConfigMaps(a).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "!" + tenancyv1.LabelTenant}); err != nil {
		t.Fatal(err)
	}
	setNamespaces(t, name, a, cc)
	if err := handedBack(ctx, b, 3*time.Minute); err != nil {
		tn := &tenancyv1.Tenant{}
		_ = cl.Get(ctx, client.ObjectKey{Name: name}, tn)
		ok, why := reviewServiceAccount(t, c, b, "op", delegation)
		t.Errorf("namespace %s, taken from Tenant %s, not handed back 3 minutes after the platform took it with the owner's quota free: %v; the release's %s binds its ServiceAccount op: %v (%s); operators %s",
			b, name, err, crb, ok, why, dump(tn.Status.Operators))
	}
}
