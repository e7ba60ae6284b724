package tenancy_test

import (
	"context"
	"strings"
	"testing"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/kubernetes"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
)

// The controller's rights, as the API server's authorizer sees them
// under charts/opctl's RBAC: it grants only what it holds, except admin
// and the operators' own kinds, each by name, and writes nothing but its
// own objects outside tenant namespaces.
func TestControllerRights(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	cases := []struct {
		verb, group, resource, namespace, name string
		want                                   bool
	}{
		{"escalate", "rbac.authorization.k8s.io", "clusterroles", "", "", false},
		{"escalate", "rbac.authorization.k8s.io", "clusterroles", "", "cluster-admin", false},
		{"bind", "rbac.authorization.k8s.io", "clusterroles", "", "cluster-admin", false},
		{"bind", "rbac.authorization.k8s.io", "clusterroles", "", "admin", true},
		{"escalate", "rbac.authorization.k8s.io", "roles", "kube-system", "", false},
		{"escalate", "rbac.authorization.k8s.io", "roles", "team-a", "extension-apiserver-authentication-reader", false},
		{"escalate", "rbac.authorization.k8s.io", "roles", "team-a", tenancy.KindsRole, true},
		{"bind", "rbac.authorization.k8s.io", "roles", "team-a", tenancy.KindsRole, true},
		{"bind", "rbac.authorization.k8s.io", "roles", "team-a", "other", false},
		{"impersonate", "", "serviceaccounts", tenancy.DefaultStorageNamespace, tenancy.ActorName("team-a"), true},
		{"impersonate", "", "serviceaccounts", "team-a", "default", false},
		{"impersonate", "", "users", "", "owner", false},
		{"get", "", "secrets", "kube-system", "", false},
		{"list", "", "secrets", "", "", false},
		{"get", "", "secrets", tenancy.DefaultStorageNamespace, "", true},
		{"create", "apps", "deployments", "team-a", "", false},
		{"create", "", "services", "team-a", "", false},
		{"create", "", "configmaps", "kube-system", "", false},
		{"create", "", "pods", "team-a", "", false},
		// The OperatorGroup's ServiceAccount: by name only.
		{"delete", "", "serviceaccounts", "kube-system", "default", false},
		{"patch", "", "serviceaccounts", "team-a", "kvstore-controller-manager", false},
		{"patch", "", "serviceaccounts", "team-a", tenancy.OperatorGroupName, true},
		// Approving is a patch; the chart grants no update it does not use.
		{"patch", "operators.coreos.com", "installplans", "team-a", "", true},
		{"update", "operators.coreos.com", "installplans", "team-a", "", false},
	}
	for _, tc := range cases {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: controllerUser, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + tenancy.DefaultStorageNamespace, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: tc.verb, Group: tc.group, Resource: tc.resource, Namespace: tc.namespace, Name: tc.name}}}
		got, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed != tc.want {
			t.Errorf("%s %s/%s %q in %q: allowed %v, want %v", tc.verb, tc.group, tc.resource, tc.name, tc.namespace, got.Status.Allowed, tc.want)
		}
	}
}

// The escalate the controller holds on Roles named tenant-kinds reaches
// tenant namespaces only: the guardrail tenant-kinds-role refuses that
// Role, with rules the controller does not hold, anywhere else, and
// RBAC alone would allow it.
func TestKindsRoleOnlyInTenants(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	as := kubernetes.NewForConfigOrDie(controllerConfig)
	// Applied, as the controller writes it: escalate by name holds for a
	// request that names the Role (a create does not).
	grab := func(ns string, labels map[string]string) error {
		_, err := as.RbacV1().Roles(ns).Apply(ctx, rbacac.Role(tenancy.KindsRole, ns).WithLabels(labels).
			WithRules(rbacac.PolicyRule().WithAPIGroups("").WithResources("secrets").WithVerbs("get", "list")), metav1.ApplyOptions{FieldManager: "test"})
		return err
	}
	plain := "kinds-plain-" + suffix()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: plain}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Client.CoreV1().Namespaces().Delete(context.Background(), plain, metav1.DeleteOptions{}) })
	for _, tc := range []struct {
		ns     string
		labels map[string]string
	}{
		{"kube-system", map[string]string{tenancyv1.LabelTenant: "team-a"}},
		{plain, nil},
		{plain, map[string]string{tenancyv1.LabelTenant: "team-a"}},
	} {
		err := grab(tc.ns, tc.labels)
		if err == nil || !strings.Contains(err.Error(), "exists only in a tenant namespace") {
			t.Errorf("the controller writing Role %s (secrets) in %s with labels %v: %v, want the guardrail's refusal", tenancy.KindsRole, tc.ns, tc.labels, err)
		}
	}
	// In a tenant's namespace, labelled for it, the same write passes.
	name := "kinds-tenant-" + suffix()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{tenancyv1.LabelTenant: name}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	if err := grab(name, map[string]string{tenancyv1.LabelTenant: name}); err != nil {
		t.Errorf("the controller writing Role %s in its tenant's namespace: %v", tenancy.KindsRole, err)
	}
}
