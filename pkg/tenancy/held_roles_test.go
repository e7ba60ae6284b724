package tenancy_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// A profile that names a ClusterRole the controller was not bound to (the
// platform forgot the binding) gives its Tenants a condition naming the
// role and what is missing, at once, not a Tenant without status while
// the controller's log says forbidden.
func TestClusterRoleNotHeld(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	id := suffix()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "node-reader-" + id},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}}}}
	if err := cl.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
	})
	profile := &tenancyv1.TenantProfile{ObjectMeta: metav1.ObjectMeta{Name: "nodes-" + id}, Spec: tenancyv1.TenantProfileSpec{ClusterRoles: []string{role.Name}}}
	if err := cl.Create(ctx, profile); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Delete(context.Background(), profile) })
	name := "unheld-" + id
	tn := newTenant(name, []string{name}, sampleChart(t, "", "0.1.0"), 1)
	tn.Spec.Profile = profile.Name
	createTenant(t, tn)
	got := waitTenant(t, name, time.Minute, "the Tenant refused for the role", func(tn *tenancyv1.Tenant) error {
		return testcluster.HasCondition(tn.Status.Conditions, operatorkit.ConditionDegraded, metav1.ConditionTrue, tenancyv1.ReasonClusterRoleNotHeld)
	})
	for _, cond := range got.Status.Conditions {
		if cond.Type == operatorkit.ConditionDegraded && (!strings.Contains(cond.Message, role.Name) || !strings.Contains(cond.Message, "nodes")) {
			t.Errorf("condition %q, want the role and its missing rules named", cond.Message)
		}
	}
}

// charts/opctl's tenantClusterRoles value names a ClusterRole for every
// Tenant: the chart lists it in the ConfigMap the controller reads at
// every reconcile and binds it to the controller. Listed but not bound
// (the chart's objects applied in part) the Tenants say so; bound, they
// install, and the role's rules are theirs to pass on.
func TestTenantClusterRolesValue(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	id := suffix()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "node-reader-" + id},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list"}}}}
	if err := cl.Create(ctx, role); err != nil {
		t.Fatal(err)
	}
	values := map[string]any{"tenantClusterRoles": []any{role.Name}}
	var applied []*unstructured.Unstructured
	t.Cleanup(func() {
		for _, o := range applied {
			_ = cl.Delete(context.Background(), o)
		}
		_ = c.Client.RbacV1().ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{})
	})
	// First the ConfigMap alone: the role is named, the binding missing.
	objs, err := applyOpctl(ctx, cl, values, func(u *unstructured.Unstructured) bool {
		return u.GetKind() == "ConfigMap" && u.GetName() == chartRolesConfigMap
	})
	applied = append(applied, objs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].GetName() != chartRolesConfigMap {
		t.Fatalf("charts/opctl renders ConfigMaps %v, want the one its Deployment names (%s)", objs, chartRolesConfigMap)
	}
	// opctl tenancy check reads the platform's roles from the cluster as
	// the controller does: a chart whose manager reads nodes fits with
	// the ConfigMap in place, and is refused without it (offline).
	nodes := writeChart(t, map[string]string{
		"Chart.yaml": chartYAML,
		"templates/rbac.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: nodes\nrules:\n- apiGroups: [\"\"]\n  resources: [nodes]\n  verbs: [get, list]\n---\n" +
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: nodes\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: nodes\n" +
			"subjects:\n- kind: ServiceAccount\n  name: op\n  namespace: {{ .Release.Namespace }}\n",
	})
	for _, tc := range []struct {
		args []string
		code int
	}{{nil, 0}, {[]string{"--offline"}, 1}} {
		cmd := exec.Command(opctlBin, append([]string{"tenancy", "check", "--kubeconfig", c.Kubeconfig, "--storage-namespace", tenancy.DefaultStorageNamespace, nodes}, tc.args...)...)
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != tc.code {
			t.Errorf("opctl tenancy check %v: exit %d, want %d:\n%s", tc.args, cmd.ProcessState.ExitCode(), tc.code, out)
		}
	}
	startController(t, tenancy.Options{})
	name := "named-" + id
	createTenant(t, newTenant(name, []string{name}, sampleChart(t, "", "0.1.0"), 1))
	waitTenant(t, name, time.Minute, "the Tenant refused for the unbound role", func(tn *tenancyv1.Tenant) error {
		return testcluster.HasCondition(tn.Status.Conditions, operatorkit.ConditionDegraded, metav1.ConditionTrue, tenancyv1.ReasonClusterRoleNotHeld)
	})
	// Then the chart's binding of the role to the controller.
	objs, err = applyOpctl(ctx, cl, values, func(u *unstructured.Unstructured) bool {
		ref, _, _ := unstructured.NestedString(u.Object, "roleRef", "name")
		return u.GetKind() == "ClusterRoleBinding" && ref == role.Name
	})
	applied = append(applied, objs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 {
		t.Fatalf("charts/opctl binds %s to the controller %d times, want once", role.Name, len(objs))
	}
	waitTenant(t, name, 2*time.Minute, "the Tenant ready with the role bound", ready)
	sar, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: controllerUser, ResourceAttributes: &authzv1.ResourceAttributes{Verb: "list", Resource: "nodes"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !sar.Status.Allowed {
		t.Errorf("the controller does not hold %s's rules after the chart's binding", role.Name)
	}
}
