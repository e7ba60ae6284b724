package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// A chart's cluster-scoped objects annotated helm.sh/resource-policy: keep
// survived the release's uninstall and the Tenant's deletion (red team 4):
// a ClusterRoleBinding giving a ServiceAccount of the tenant's namespace
// cluster-wide rights, and a webhook configuration calling a Service of
// that namespace, so whoever next got a namespace of that name inherited
// the binding and met the old tenant's webhook. The render guard drops the
// annotation from cluster-scoped objects, and both go with the Tenant.
func TestKeptClusterObjectsGoWithTheTenant(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "keep-" + suffix()
	owner := "owner-" + name
	keep := "  annotations:\n    helm.sh/resource-policy: keep\n"
	files := map[string]string{
		"Chart.yaml":        chartYAML,
		"templates/sa.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: op\n",
		"templates/crb.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: delegate\n" + keep +
			"roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: system:auth-delegator\n" +
			"subjects:\n- kind: ServiceAccount\n  name: op\n  namespace: " + name + "\n",
		"templates/vwc.yaml": "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: hook\n" + keep +
			"webhooks:\n- name: hook.keep.example.com\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  failurePolicy: Fail\n" +
			"  clientConfig:\n    service:\n      namespace: " + name + "\n      name: hook\n      path: /validate\n" +
			"  rules:\n  - apiGroups: [\"\"]\n    apiVersions: [v1]\n    operations: [CREATE]\n    resources: [configmaps]\n",
	}
	createTenant(t, newTenant(name, []string{name}, writeChart(t, files), 1, owner))
	kept := func(when string) (crbs []string, vwcs []string) {
		t.Helper()
		var bl rbacv1.ClusterRoleBindingList
		if err := cl.List(ctx, &bl, client.MatchingLabels{tenancyv1.LabelTenant: name}); err != nil {
			t.Fatal(err)
		}
		for _, b := range bl.Items {
			crbs = append(crbs, b.Name)
		}
		var wl admissionregistrationv1.ValidatingWebhookConfigurationList
		if err := cl.List(ctx, &wl, client.MatchingLabels{tenancyv1.LabelTenant: name}); err != nil {
			t.Fatal(err)
		}
		for _, w := range wl.Items {
			vwcs = append(vwcs, w.Name)
		}
		t.Logf("%s: ClusterRoleBindings %v, ValidatingWebhookConfigurations %v", when, crbs, vwcs)
		return crbs, vwcs
	}
	var crbs, vwcs []string
	testcluster.Eventually(t, 2*time.Minute, "the release's binding and webhook configuration installed", func(ctx context.Context) error {
		crbs, vwcs = kept("installing")
		if len(crbs) != 1 || len(vwcs) != 1 {
			return fmt.Errorf("bindings %v, webhook configurations %v", crbs, vwcs)
		}
		return nil
	})
	t.Cleanup(func() {
		for _, n := range crbs {
			_ = c.Client.RbacV1().ClusterRoleBindings().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
		for _, n := range vwcs {
			_ = c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})

	if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	tenantGone(t, name)
	testcluster.Eventually(t, time.Minute, "namespace "+name+" gone", func(ctx context.Context) error {
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{}); err == nil {
			return context.DeadlineExceeded
		}
		return nil
	})
	crbs, vwcs = kept("Tenant deleted")
	if len(crbs) > 0 || len(vwcs) > 0 {
		t.Errorf("the deleted Tenant's ClusterRoleBindings %v and webhook configurations %v outlive it", crbs, vwcs)
	}

	// Another party gets a namespace of that name (the platform reusing it
	// for another tenant, here made by hand).
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	sar, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:" + name + ":op", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + name},
		ResourceAttributes: &authzv1.ResourceAttributes{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ServiceAccount op of the new namespace %s may create SubjectAccessReviews cluster-wide: %v (%s)", name, sar.Status.Allowed, sar.Status.Reason)
	if sar.Status.Allowed {
		t.Errorf("the new namespace's ServiceAccount op inherits the deleted tenant's cluster-wide binding")
	}
	newcomer := "newcomer-" + name
	if _, err := c.Client.RbacV1().RoleBindings(name).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "admin"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: newcomer}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = kubernetes.NewForConfigOrDie(c.As(newcomer)).CoreV1().ConfigMaps(name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}, metav1.CreateOptions{})
	t.Logf("the new namespace's admin creating a ConfigMap: %v", err)
	if err != nil && strings.Contains(err.Error(), "hook.keep.example.com") {
		t.Errorf("the deleted tenant's webhook still judges the new namespace's writes: %v", err)
	}
}
