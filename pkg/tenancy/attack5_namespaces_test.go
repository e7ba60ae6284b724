package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Red team 5. A Tenant's webhook configurations are narrowed to its
// namespaces (namespaceSelector and the opctl-tenant-requests condition,
// which lets through its namespaces' ServiceAccounts). When the platform
// takes a namespace away from the Tenant, the release's values change
// (watchNamespaces), so the controller upgrades it; but the deployed
// revision holds objects in the namespace taken away (a Role per watched
// namespace, as multi-namespace charts and localized ClusterRoles do), so
// the tamper check refuses the upgrade (ReleaseTampered) before anything
// is built, and a release that is neither in sync nor held never has its
// webhooks narrowed again. The webhook configuration keeps naming the old
// namespace: whoever gets it next (here another Tenant, after the
// platform deleted and reused the name) has its writes sent to the old
// tenant's webhook, which reads and, mutating, rewrites them; and the
// release's ClusterRoleBinding, whose subjects are the watched namespaces'
// ServiceAccounts, keeps binding the namespace's ServiceAccount of that
// name for the newcomer. The namespace itself stays labelled, annotated
// and owned for the old Tenant, its owners still admin there (logged).
func TestAttack5NamespaceRemovedKeepsWebhook(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "nsrm-" + suffix()
	a, b := name+"-a", name+"-b"
	owner := "owner-" + name
	createTenant(t, newTenant(name, []string{a, b}, writeChart(t, hookedChart("hook.nsrm.example.com", a)), 1, owner))
	releaseBinding(t, c, name, true)

	// The platform takes namespace b away from the tenant.
	setNamespaces(t, name, a)
	// The release is upgraded to the one namespace (its Role in b deleted,
	// its webhook and binding narrowed to a; its webhook's Service never
	// answers, so it stays Progressing), then b is handed back: no
	// label, annotation or ownerReference of the Tenant's, no rights of
	// its owners.
	waitHandedBack(t, b, 2*time.Minute)
	if _, err := c.Client.RbacV1().Roles(b).Get(ctx, "reader", metav1.GetOptions{}); err == nil {
		t.Errorf("the release's Role %s/reader outlives the namespace's removal", b)
	}
	for _, w := range tenantWebhooks(t, name) {
		for _, h := range w.Webhooks {
			if strings.Contains(dump(h.NamespaceSelector), b) {
				t.Errorf("webhook %s still selects namespace %s: %s", h.Name, b, dump(h.NamespaceSelector))
			}
		}
	}
	if ok, why := review(t, c, owner, nil, authzv1.ResourceAttributes{Namespace: b, Verb: "create", Resource: "secrets"}); ok {
		t.Errorf("after the removal, %s's owner may still create Secrets in %s (%s)", name, b, why)
	}

	// The platform deletes namespace b and later gives the name to another
	// tenant.
	_ = c.Client.CoreV1().Namespaces().Delete(ctx, b, metav1.DeleteOptions{})
	testcluster.Eventually(t, 2*time.Minute, "namespace "+b+" gone", func(ctx context.Context) error {
		if err := cl.Get(ctx, client.ObjectKey{Name: b}, &corev1.Namespace{}); err == nil {
			return fmt.Errorf("namespace %s still there", b)
		}
		return nil
	})
	other := "other-" + suffix()
	victim := "victim-" + other
	ot := newTenant(other, []string{b}, "", 0, victim)
	createTenant(t, ot)
	waitTenant(t, other, 2*time.Minute, "the other tenant ready", ready)
	// The release's ClusterRoleBinding still names ServiceAccount op of b:
	// the other tenant's ServiceAccount of that name holds its rights.
	if ok, why := reviewServiceAccount(t, c, b, "op", delegation); ok {
		t.Errorf("ServiceAccount op of namespace %s, now tenant %s's, holds tenant %s's cluster-wide binding (%s)", b, other, name, why)
	}
	vc := kubernetes.NewForConfigOrDie(c.As(victim))
	var err error
	testcluster.Eventually(t, time.Minute, "the other tenant's owner creating a ConfigMap in "+b, func(ctx context.Context) error {
		_, err = vc.CoreV1().ConfigMaps(b).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "secret-" + suffix()}, Data: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{})
		if err != nil && strings.Contains(err.Error(), "forbidden") {
			return err // its admin RoleBinding not there yet
		}
		return nil
	})
	t.Logf("the other tenant's owner creating a ConfigMap in %s: %v", b, err)
	if err != nil && strings.Contains(err.Error(), "hook.nsrm.example.com") {
		t.Errorf("tenant %s's webhook judges the writes of tenant %s's owner in namespace %s, taken from %s: %v", name, other, b, name, err)
	}
}

// Red team 5, the same route at the Tenant's deletion: the platform takes
// a namespace holding objects of the deployed revision from the Tenant and
// deletes the Tenant at once, before any upgrade. The uninstall's tamper
// check (Reconciler.Uninstall verifies the last revision) counted the
// namespace as outside the tenant and refused, so the Tenant stayed
// deleting and its ClusterRoleBinding stayed. Now the namespace the Tenant
// is leaving is its own to uninstall from, and is handed back, not
// deleted with the Tenant's.
func TestAttack5NamespaceRemovedBlocksUninstall(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "nsrd-" + suffix()
	a, b := name+"-a", name+"-b"
	createTenant(t, newTenant(name, []string{a, b}, writeChart(t, perNamespaceChart()), 1, "owner-"+name))
	crb := releaseBinding(t, c, name, false)
	t.Cleanup(func() {
		tn := &tenancyv1.Tenant{}
		if cl.Get(context.Background(), client.ObjectKey{Name: name}, tn) == nil {
			tn.Finalizers = nil
			_ = cl.Update(context.Background(), tn)
		}
		for _, ns := range []string{a, b} {
			_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})
	tn := setNamespaces(t, name, a)
	if err := cl.Delete(ctx, tn); err != nil {
		t.Fatal(err)
	}
	tenantGone(t, name)
	if _, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{}); err == nil {
		t.Errorf("ClusterRoleBinding %s outlives Tenant %s", crb, name)
	}
	if _, err := c.Client.RbacV1().Roles(b).Get(ctx, "reader", metav1.GetOptions{}); err == nil {
		t.Errorf("the release's Role %s/reader outlives Tenant %s", b, name)
	}
	// The garbage collector had the Tenant's ownerReference to act on;
	// the handed-back namespace has none and stays, unlabelled.
	ns, err := c.Client.CoreV1().Namespaces().Get(ctx, b, metav1.GetOptions{})
	switch {
	case err != nil:
		t.Errorf("namespace %s, taken from the Tenant before its deletion: %v", b, err)
	case ns.DeletionTimestamp != nil || ns.Labels[tenancyv1.LabelTenant] != "" || len(ns.OwnerReferences) > 0:
		t.Errorf("namespace %s not handed back: deleting %v, labels %v, owners %v", b, ns.DeletionTimestamp, ns.Labels, ns.OwnerReferences)
	}
}
