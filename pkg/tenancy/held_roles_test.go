package tenancy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
