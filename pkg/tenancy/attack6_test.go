package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcatalog"
	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// Red team 6. The release of a Tenant lives in its first namespace (its
// records are kept by tenant and namespace). When the platform takes the
// first namespace away, the release is looked for in the new first
// namespace: the old one, whose objects (a Role per watched namespace,
// a ClusterRoleBinding of each one's ServiceAccount op, a webhook
// configuration narrowed to both namespaces) are all still there, is
// neither upgraded nor uninstalled. releaseLeaving asks Holds of the
// release in the new first namespace, which has no revision there, so
// the namespace taken away is handed back at once: unlabelled and
// unowned, while the old release's webhook still selects it and its
// ClusterRoleBinding still binds its ServiceAccount op, for whoever gets
// the namespace next (red team 5's route, by the first namespace).
func TestAttack6FirstNamespaceRemoved(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "nsfirst-" + suffix()
	a, b := name+"-a", name+"-b"
	createTenant(t, newTenant(name, []string{a, b}, writeChart(t, hookedChart("hook.nsfirst.example.com", b)), 1, "owner-"+name))
	crb := releaseBinding(t, c, name, true)
	t.Cleanup(func() {
		for _, ns := range []string{a, b} {
			_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})

	// The platform takes the first namespace, a, from the tenant.
	setNamespaces(t, name, b)
	waitHandedBack(t, a, 2*time.Minute)
	// Handed back, a must hold nothing of the tenant's release: no
	// webhook of it selects a, its binding names no ServiceAccount of a.
	for _, w := range tenantWebhooks(t, name) {
		for _, h := range w.Webhooks {
			if strings.Contains(dump(h.NamespaceSelector), a) {
				t.Errorf("namespace %s handed back, yet webhook %s of tenant %s still selects it: %s", a, h.Name, name, dump(h.NamespaceSelector))
			}
		}
	}
	if got, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crb, metav1.GetOptions{}); err == nil {
		for _, s := range got.Subjects {
			if s.Namespace == a {
				t.Errorf("namespace %s handed back, yet ClusterRoleBinding %s of tenant %s still binds its ServiceAccount %s", a, crb, name, s.Name)
			}
		}
	}
	if _, err := c.Client.RbacV1().Roles(a).Get(ctx, "reader", metav1.GetOptions{}); err == nil {
		t.Errorf("namespace %s handed back, yet the release's Role %s/reader is still there", a, a)
	}
	if ok, why := reviewServiceAccount(t, c, a, "op", delegation); ok {
		t.Errorf("ServiceAccount op of namespace %s, handed back, holds tenant %s's cluster-wide binding (%s)", a, name, why)
	}
	// The release moved: uninstalled from a (ReleaseMoved), installed
	// again in b, its webhook selecting b alone.
	testcluster.Eventually(t, 2*time.Minute, "the release installed again in "+b, func(ctx context.Context) error {
		ws := tenantWebhooks(t, name)
		if len(ws) != 1 || len(ws[0].Webhooks) != 1 {
			return fmt.Errorf("%d webhook configurations", len(ws))
		}
		sel := dump(ws[0].Webhooks[0].NamespaceSelector)
		if !strings.Contains(sel, b) || strings.Contains(sel, a) {
			return fmt.Errorf("webhook selects %s", sel)
		}
		return nil
	})
}

// Red team 6. The hand-back of a namespace taken from a Tenant deletes
// the controller's bindings there (its owners' admin, the actor's) and
// leaves "the tenant's own objects" for the platform. But an owner holds
// admin there, and admin may bind admin: a RoleBinding the owner made
// while the namespace was its own stays, so the owner keeps admin in a
// namespace that is no tenant's any more, where no guardrail applies
// (they select the tenant label, now gone), no quota nor NetworkPolicy
// is left, and Services may be NodePorts. When the platform gives the
// namespace to another Tenant (adoptNamespaces), the old owner is admin
// in the new tenant's namespace and reads its Secrets.
func TestAttack6HandBackKeepsOwnerBindings(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "nskeep-" + suffix()
	a, b := name+"-a", name+"-b"
	owner := "owner-" + name
	createTenant(t, newTenant(name, []string{a, b}, "", 0, owner))
	waitTenant(t, name, 2*time.Minute, "the tenant ready", ready)
	t.Cleanup(func() { _ = c.Client.CoreV1().Namespaces().Delete(context.Background(), b, metav1.DeleteOptions{}) })
	oc := kubernetes.NewForConfigOrDie(c.As(owner))
	testcluster.Eventually(t, time.Minute, "the owner binding itself admin in "+b, func(ctx context.Context) error {
		_, err := oc.RbacV1().RoleBindings(b).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "keep"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
			Subjects: []rbacv1.Subject{rbacSubject(owner)}}, metav1.CreateOptions{})
		return err
	})

	// The platform takes namespace b from the tenant.
	setNamespaces(t, name, a)
	waitHandedBack(t, b, 2*time.Minute)
	can := func(user, verb, resource string) (bool, string) {
		t.Helper()
		return review(t, c, user, nil, authzv1.ResourceAttributes{Namespace: b, Verb: verb, Resource: resource})
	}
	if ok, why := can(owner, "create", "secrets"); ok {
		t.Errorf("namespace %s handed back, yet tenant %s's owner may still create Secrets there (%s)", b, name, why)
	}
	// Unguarded now: a NodePort Service, which tenant-service-exposure
	// refused while the namespace was the tenant's.
	_, err := oc.CoreV1().Services(b).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "exposed"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	if err == nil {
		t.Errorf("tenant %s's owner created a NodePort Service in %s, handed back", name, b)
	}

	// The platform gives b to another tenant, which adopts it. (The
	// LimitRange the hand-back leaves, still controlled by the Tenant,
	// would refuse the adoption: TestAttack6HandBackLeavesControllerObjects.
	// The platform deletes it here.)
	_ = c.Client.CoreV1().LimitRanges(b).Delete(ctx, tenancy.LimitRangeName, metav1.DeleteOptions{})
	other := "nsnext-" + suffix()
	victim := "victim-" + other
	ot := newTenant(other, []string{b}, "", 0, victim)
	ot.Spec.AdoptNamespaces = true
	createTenant(t, ot)
	waitTenant(t, other, 2*time.Minute, "the other tenant ready", ready)
	if ok, why := can(owner, "get", "secrets"); ok {
		t.Errorf("tenant %s's owner may read the Secrets of tenant %s in namespace %s (%s)", name, other, b, why)
	}
}

// Red team 6. The hand-back deletes the controller's objects in the
// namespace by the names namespaceObjects and actorObjects give them,
// built again for the namespace with an empty quota (quota.Quota{}):
// that build has no LimitRange (it is made only when the quota has
// container defaults), so the Tenant's LimitRange stays, labelled for
// the Tenant and controlled by it. The namespace is not handed back
// whole: another Tenant that adopts it is refused for good
// (OwnershipConflict on tenant-limits), and the old tenant's defaults
// keep applying to whatever runs there.
func TestAttack6HandBackLeavesControllerObjects(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "nsleft-" + suffix()
	a, b := name+"-a", name+"-b"
	tn := newTenant(name, []string{a, b}, "", 0, "owner-"+name)
	createTenant(t, tn)
	tn = waitTenant(t, name, 2*time.Minute, "the tenant ready", ready)
	t.Cleanup(func() { _ = c.Client.CoreV1().Namespaces().Delete(context.Background(), b, metav1.DeleteOptions{}) })
	if _, err := c.Client.CoreV1().LimitRanges(b).Get(ctx, tenancy.LimitRangeName, metav1.GetOptions{}); err != nil {
		t.Fatalf("the tenant's LimitRange in %s: %v", b, err)
	}
	setNamespaces(t, name, a)
	waitHandedBack(t, b, 2*time.Minute)
	owned := func(kind string, m metav1.Object) {
		for _, r := range m.GetOwnerReferences() {
			if r.UID == tn.UID {
				t.Errorf("namespace %s handed back, yet %s %s is still controlled by Tenant %s (labels %v)", b, kind, m.GetName(), name, m.GetLabels())
			}
		}
	}
	// The default-deny policy stays, the platform's: the pods the tenant
	// left there are not opened to every namespace.
	deny := &networkingv1.NetworkPolicy{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: b, Name: tenancy.PolicyDenyAll}, deny); err != nil {
		t.Errorf("namespace %s handed back without its default-deny NetworkPolicy: %v", b, err)
	} else if deny.Labels[tenancyv1.LabelTenant] != "" {
		t.Errorf("the kept default-deny NetworkPolicy of %s still carries the tenant label: %v", b, deny.Labels)
	}
	for kind, list := range map[string]client.ObjectList{"LimitRange": &corev1.LimitRangeList{}, "ResourceQuota": &corev1.ResourceQuotaList{},
		"RoleBinding": &rbacv1.RoleBindingList{}, "NetworkPolicy": &networkingv1.NetworkPolicyList{}} {
		if err := cl.List(ctx, list, client.InNamespace(b)); err != nil {
			t.Fatal(err)
		}
		if err := meta.EachListItem(list, func(o runtime.Object) error {
			owned(kind, o.(metav1.Object))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// Red team 6. An OLM tenant's OperatorGroup names the ServiceAccount
// tenant-operators of its first namespace, which the controller binds to
// admin (and the kinds Role, and the named ClusterRoles) in every tenant
// namespace (installerObjects). The owners can mint its tokens: it is
// theirs. The hand-back deletes only namespaceObjects and actorObjects,
// not the backends' objects, so after a namespace is taken from an OLM
// tenant and handed back, tenant-operators keeps admin there: the owner,
// through its token, is admin in a namespace that is no tenant's, and in
// the next tenant's once it is given on.
func TestAttack6OLMHandBackKeepsInstallerBindings(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	c.StartOLM(t)
	addr := testcatalog.Serve(t, publishSampleCatalog(t, "0.1.0"))
	startController(t, tenancy.Options{})
	name := "nsolm-" + suffix()
	a, b := name, name+"-b"
	owner := "owner-" + name
	tn := olmTenant(name, owner, tenancyv1.OLMSource{Catalog: tenancyv1.OLMCatalog{Address: addr}, Package: olmPackage, Channel: "stable"}, "0.1.0")
	tn.Spec.Namespaces = []string{a, b}
	tn.Spec.Operators[0].Instances = 1
	createTenant(t, tn)
	waitTenant(t, name, 4*time.Minute, "OLM tenant on 0.1.0 in two namespaces", olmReady("0.1.0"))
	t.Cleanup(func() { _ = c.Client.CoreV1().Namespaces().Delete(context.Background(), b, metav1.DeleteOptions{}) })
	if _, err := c.Client.RbacV1().RoleBindings(b).Get(ctx, tenancy.OperatorGroupName, metav1.GetOptions{}); err != nil {
		t.Fatalf("RoleBinding %s/%s: %v", b, tenancy.OperatorGroupName, err)
	}

	setNamespaces(t, name, a)
	waitHandedBack(t, b, 3*time.Minute)
	for _, sa := range []string{tenancy.OperatorGroupName, olmSA} {
		user := "system:serviceaccount:" + a + ":" + sa
		if ok, why := reviewServiceAccount(t, c, a, sa, authzv1.ResourceAttributes{Namespace: b, Verb: "get", Resource: "secrets"}); ok {
			t.Errorf("namespace %s handed back, yet %s of tenant %s may read its Secrets (%s)", b, user, name, why)
		}
	}
	// The owner mints the installer's token (admin in a allows it) and
	// uses it in b.
	tc := kubernetes.NewForConfigOrDie(tokenAs(t, c, owner, a, tenancy.OperatorGroupName))
	if _, err := tc.CoreV1().Secrets(b).List(ctx, metav1.ListOptions{}); err == nil {
		t.Errorf("tenant %s's owner, with a token of %s/%s, lists the Secrets of %s, handed back", name, a, tenancy.OperatorGroupName, b)
	}
}
