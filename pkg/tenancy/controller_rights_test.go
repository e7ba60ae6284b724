package tenancy_test

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
		{"update", "operators.coreos.com", "installplans", "team-a", "", true},
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
