package tenancy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// The red team's: the guardrails knew the tenant's actor by a user name
// suffix, so an owner made a ServiceAccount of that name in its own
// namespace, gave it the bypass, and acted as the actor. An exemption
// names exact users: no ServiceAccount an owner makes, whatever its name
// and whatever it holds in the tenant's namespaces, passes as the actor
// or the controller; the real actor still does.
func TestOwnerMadeIdentitiesNotExempt(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "posers-" + suffix()
	owner := "owner-" + name
	createTenant(t, newTenant(name, []string{name}, sampleChart(t, "", "0.1.0"), 1, owner))
	waitTenant(t, name, 2*time.Minute, "tenant Ready", ready)

	posersRefused(t, c, name, owner, tenancy.ActorName(name), tenancy.ActorName("other-"+name), "opctl-controller-manager", "kube-controller-manager")

	// The real actor, of the controller's namespace, is still exempt.
	actor := kubernetes.NewForConfigOrDie(c.AsServiceAccount(tenancy.DefaultStorageNamespace, tenancy.ActorName(name)))
	sa := labelled("by-the-actor", map[string]string{tenancyv1.LabelTenant: name})
	if _, err := actor.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Errorf("the tenant's actor labelling a ServiceAccount for its tenant: %v", err)
	} else {
		_ = c.Client.CoreV1().ServiceAccounts(name).Delete(ctx, sa.Name, metav1.DeleteOptions{})
	}
}

// posersRefused has owner make ServiceAccounts of the given names in its
// namespace name, bind them admin and (by admin, standing for any route)
// the actor's bypass Role there, and checks that as each the guardrails
// refuse planting the tenant or a shard label, and changing or scaling
// the release's Deployments.
func posersRefused(t *testing.T, c *testcluster.Cluster, name, owner string, posers ...string) {
	t.Helper()
	deps := listReleaseDeployments(t, c, name)
	ctx := context.Background()
	asOwner := kubernetes.NewForConfigOrDie(c.As(owner))
	var subjects []rbacv1.Subject
	for _, p := range posers {
		if _, err := asOwner.CoreV1().ServiceAccounts(name).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: p}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("the owner creating ServiceAccount %s: %v", p, err)
		}
		subjects = append(subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: p, Namespace: name})
	}
	if _, err := asOwner.RbacV1().RoleBindings(name).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "posers"}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the owner binding its ServiceAccounts admin: %v", err)
	}
	// Whatever route gives them the bypass in the tenant's namespace (the
	// red team's: a kind in the controller's group aggregated into admin),
	// the name and the right together are still no proof.
	if _, err := c.Client.RbacV1().RoleBindings(name).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "posers-bypass"}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: tenancy.ActorRole}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	for _, p := range posers {
		t.Run(p, func(t *testing.T) {
			as := kubernetes.NewForConfigOrDie(c.AsServiceAccount(name, p))
			refusedByPolicy(t, "planting the tenant label", func() error {
				_, err := as.CoreV1().ServiceAccounts(name).Create(ctx, labelled("planted-"+suffix(), map[string]string{tenancyv1.LabelTenant: name}), metav1.CreateOptions{})
				return err
			})
			refusedByPolicy(t, "planting a shard label", func() error {
				_, err := as.CoreV1().ServiceAccounts(name).Create(ctx, labelled("sharded-"+suffix(), map[string]string{"shard.sharding.opctl.dev/ring": "0"}), metav1.CreateOptions{})
				return err
			})
			for _, d := range deps {
				refusedByPolicy(t, "changing the release's Deployment "+d, func() error {
					_, err := as.AppsV1().Deployments(name).Patch(ctx, d, types.MergePatchType, []byte(`{"metadata":{"labels":{"poser":"was-here"}}}`), metav1.PatchOptions{})
					return err
				})
				refusedByPolicy(t, "scaling the release's Deployment "+d, func() error {
					_, err := as.AppsV1().Deployments(name).Patch(ctx, d, types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}, "scale")
					return err
				})
			}
		})
	}
}

// labelled is a ServiceAccount n with labels.
func labelled(n string, labels map[string]string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels}}
}

// refusedByPolicy fails t unless do is refused by a guardrail policy (not
// by RBAC, which would prove nothing about the exemption).
func refusedByPolicy(t *testing.T, what string, do func() error) {
	t.Helper()
	err := do()
	switch {
	case err == nil:
		t.Errorf("%s: allowed, want a guardrail's refusal", what)
	case !strings.Contains(err.Error(), "ValidatingAdmissionPolicy"):
		t.Errorf("%s: %v, want a guardrail's refusal", what, err)
	}
}

// listReleaseDeployments names the Deployments of ns's releases.
func listReleaseDeployments(t *testing.T, c *testcluster.Cluster, ns string) []string {
	t.Helper()
	list, err := c.Client.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{LabelSelector: tenancyv1.LabelTenant})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range list.Items {
		out = append(out, d.Name)
	}
	if len(out) == 0 {
		t.Fatalf("no release Deployment in %s", ns)
	}
	return out
}
