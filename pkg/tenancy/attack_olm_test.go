package tenancy_test

import (
	"context"
	"strings"
	"testing"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
)

// OLM's aggregated roles give admin create, update and delete on
// Subscriptions, CSVs, CatalogSources and InstallPlans (issue "A tenant is its
// namespaces", item 3). RBAC lets the owner; the guardrail refuses it, with
// the controller stopped too.
func TestOwnersCannotSubscribe(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	name, as := stoppedTenant(t, "olm-owner-")
	owner := "owner-" + name

	review, err := kubernetes.NewForConfigOrDie(c.As(owner)).AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authzv1.SelfSubjectAccessReview{
		Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{Namespace: name, Verb: "create", Group: "operators.coreos.com", Resource: "subscriptions"}}},
		metav1.CreateOptions{})
	if err != nil || !review.Status.Allowed {
		t.Fatalf("RBAC does not let the owner create Subscriptions (%v): OLM's aggregated roles are missing, the test would prove nothing", err)
	}
	sub := &operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: "mine", Namespace: name},
		Spec: &operatorsv1alpha1.SubscriptionSpec{CatalogSource: "operatorhubio-catalog", CatalogSourceNamespace: "olm", Package: "anything", Channel: "stable"}}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "managed by the opctl tenancy controller") {
			t.Errorf("the owner %s: %v, want the guardrail's refusal", what, err)
		}
	}
	// What OLM's aggregated roles do not give admin, RBAC refuses; the
	// guardrail refuses it too where a platform's roles are wider.
	forbidden := func(what string, err error) {
		t.Helper()
		if !apierrors.IsForbidden(err) {
			t.Errorf("the owner %s: %v, want Forbidden", what, err)
		}
	}
	refused("creating a Subscription", as.Create(ctx, sub))
	// Objects the controller or OLM made: the owner may not delete them.
	for _, o := range []client.Object{
		&operatorsv1alpha1.Subscription{ObjectMeta: metav1.ObjectMeta{Name: "kv", Namespace: name},
			Spec: &operatorsv1alpha1.SubscriptionSpec{CatalogSource: "c", CatalogSourceNamespace: name, Package: "p", Channel: "stable"}},
		&operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Name: "kv", Namespace: name},
			Spec: operatorsv1alpha1.CatalogSourceSpec{SourceType: operatorsv1alpha1.SourceTypeGrpc, Address: "127.0.0.1:1"}},
		&operatorsv1alpha1.InstallPlan{ObjectMeta: metav1.ObjectMeta{Name: "kv", Namespace: name},
			Spec: operatorsv1alpha1.InstallPlanSpec{ClusterServiceVersionNames: []string{"p.v1"}, Approval: operatorsv1alpha1.ApprovalManual}},
	} {
		if err := cl.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		kind := o.GetObjectKind().GroupVersionKind().Kind
		refused("deleting "+kind+" "+o.GetName(), as.Delete(ctx, o))
		// Approving an InstallPlan would pass the controller's checks (OLM
		// applies its CRDs with OLM's rights); another catalog address
		// serves other bundles under the same names.
		switch o := o.(type) {
		case *operatorsv1alpha1.InstallPlan:
			o.Spec.Approved = true
			forbidden("approving InstallPlan "+o.Name, as.Update(ctx, o))
		case *operatorsv1alpha1.CatalogSource:
			o.Spec.Address = "attacker.example:50051"
			forbidden("pointing CatalogSource "+o.Name+" elsewhere", as.Update(ctx, o))
		}
	}
	csv := &operatorsv1alpha1.ClusterServiceVersion{ObjectMeta: metav1.ObjectMeta{Name: "mine.v1", Namespace: name},
		Spec: operatorsv1alpha1.ClusterServiceVersionSpec{DisplayName: "mine", InstallStrategy: operatorsv1alpha1.NamedInstallStrategy{StrategyName: "deployment"}}}
	forbidden("creating a CSV", as.Create(ctx, csv))
	live := &operatorsv1alpha1.Subscription{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: "kv"}, live); err != nil {
		t.Fatal(err)
	}
	live.Spec.Config = &operatorsv1alpha1.SubscriptionConfig{Env: nil, NodeSelector: map[string]string{"x": "y"}}
	refused("changing the controller's Subscription", as.Update(ctx, live))
}
