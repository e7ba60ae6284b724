package tenancy_test

import (
	"context"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
)

// keptGroupBindingChart is groupBindingChart with each RoleBinding
// delegate-<ns> marked helm.sh/resource-policy: keep, which the render
// guard leaves on namespaced objects.
func keptGroupBindingChart() map[string]string {
	files := groupBindingChart()
	ns := "  namespace: {{ $.Release.Namespace }}\n"
	files["templates/each.yaml"] = strings.Replace(files["templates/each.yaml"], ns, ns+"  annotations:\n    helm.sh/resource-policy: keep\n", 1)
	return files
}

// TestAttack18KeptBindingNamespaceHandedBack: red team 18. Holds reads,
// once the sweep has run, only the live revisions; the sweep and Helm's
// upgrade keep an object marked helm.sh/resource-policy: keep in a
// namespace the tenant keeps, by the object's own namespace, not by where
// it reaches. Tenant A runs keptGroupBindingChart on a and b: RoleBinding
// a/delegate-b grants Role reader in a to every ServiceAccount of b, and
// is kept. The platform takes b: the upgrade to a alone succeeds and
// keeps a/delegate-b (it is in a, which A keeps), the sweep keeps it too,
// and no live revision names it, so b is handed back with the binding
// live: whoever gets b next has its accounts read A's ConfigMaps in a.
// No quota trick, nothing for the owner to keep doing.
func TestAttack18KeptBindingNamespaceHandedBack(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "rt18keep-" + suffix()
	a, b := name+"-a", name+"-b"
	owner := "owner-" + name
	createTenant(t, newTenant(name, []string{a, b}, writeChart(t, keptGroupBindingChart()), 1, owner))
	t.Cleanup(func() {
		unfinalize(name)
		_ = c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), "opctl."+name+".kv.hook", metav1.DeleteOptions{})
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), a, metav1.DeleteOptions{})
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), b, metav1.DeleteOptions{})
	})
	rbB := "delegate-" + b
	testcluster.Eventually(t, 2*time.Minute, "the release's binding "+a+"/"+rbB, func(ctx context.Context) error {
		_, err := c.Client.RbacV1().RoleBindings(a).Get(ctx, rbB, metav1.GetOptions{})
		return err
	})
	readA := authzv1.ResourceAttributes{Namespace: a, Verb: "get", Resource: "configmaps", Name: "any"}
	if ok, why := reviewServiceAccount(t, c, b, "op", readA); !ok {
		t.Fatalf("ServiceAccount op of %s may not read ConfigMaps in %s through the release's binding: %s", b, a, why)
	}

	setNamespaces(t, name, a)
	waitHandedBack(t, b, 3*time.Minute)
	if rb, err := c.Client.RbacV1().RoleBindings(a).Get(ctx, rbB, metav1.GetOptions{}); err == nil {
		ok, why := reviewServiceAccount(t, c, b, "op", readA)
		logRevisions(t, c, name, a)
		t.Errorf("namespace %s handed back while tenant %s's kept RoleBinding %s/%s grants Role reader to %v (ServiceAccount op of %s may read ConfigMaps in %s: %v, %s)",
			b, name, a, rbB, rb.Subjects, b, a, ok, why)
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// TestAttack18FinalizedBindingHoldsNamespace: red team 18. An owner, with
// admin in its namespace b, makes a RoleBinding of its own there (admin,
// to itself) carrying a finalizer that nothing will ever remove. The
// platform takes b: the hand-back deletes every RoleBinding in b, but a
// deleted object with a finalizer stays, listed, and RBAC still grants
// by it. Handing b back must not hang on it, and the owner must hold
// nothing in b afterwards.
func TestAttack18FinalizedBindingHoldsNamespace(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "rt18fin-" + suffix()
	a, b := name+"-a", name+"-b"
	owner := "owner-" + name
	createTenant(t, newTenant(name, []string{a, b}, "", 0, owner))
	waitTenant(t, name, 2*time.Minute, "the tenant ready", ready)
	const finalizer = "example.com/hold"
	t.Cleanup(func() {
		// Let b go: take the finalizer off as a cluster admin.
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, _ = c.Client.RbacV1().RoleBindings(b).Patch(context.Background(), "hold", types.MergePatchType, patch, metav1.PatchOptions{})
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), b, metav1.DeleteOptions{})
	})
	oc := kubernetes.NewForConfigOrDie(c.As(owner))
	hold := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "hold", Finalizers: []string{finalizer}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects: []rbacv1.Subject{rbacSubject(owner)}}
	testcluster.Eventually(t, time.Minute, "the owner's finalized admin binding in "+b, func(ctx context.Context) error {
		_, err := oc.RbacV1().RoleBindings(b).Create(ctx, hold, metav1.CreateOptions{})
		return err
	})

	// The platform takes namespace b from the tenant.
	setNamespaces(t, name, a)
	if err := handedBack(ctx, b, 2*time.Minute); err != nil {
		t.Errorf("namespace %s, taken from tenant %s, is not handed back: %v", b, name, err)
	}
	if live, err := c.Client.RbacV1().RoleBindings(b).Get(ctx, "hold", metav1.GetOptions{}); err == nil {
		t.Logf("RoleBinding %s/hold: deletionTimestamp %v, finalizers %v", b, live.DeletionTimestamp, live.Finalizers)
	}
	if ok, why := review(t, c, owner, nil, authzv1.ResourceAttributes{Namespace: b, Verb: "create", Resource: "secrets"}); ok {
		t.Errorf("namespace %s taken from tenant %s, yet its owner may still create Secrets there (%s)", b, name, why)
	}
	if ok, why := review(t, c, owner, nil, authzv1.ResourceAttributes{Namespace: b, Verb: "create", Resource: "rolebindings", Group: rbacv1.GroupName}); ok {
		t.Errorf("namespace %s taken from tenant %s, yet its owner may still create RoleBindings there (%s)", b, name, why)
	}
}
