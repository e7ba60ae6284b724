package tenancy_test

import (
	"context"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// routeGrants is a namespaced kind in the shape of Gateway API's
// ReferenceGrant: one in namespace x lets routes of the namespace it
// names reach Services in x. The platform installs it with a ClusterRole
// aggregated into admin, as Gateway API and most operators' kinds are.
var routeGrants = schema.GroupVersionResource{Group: "routing.rt13.example.com", Version: "v1", Resource: "routegrants"}

// installRouteGrants creates the RouteGrant CRD and its admin ClusterRole
// (as the platform) and waits until both serve.
func installRouteGrants(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: routeGrants.Resource + "." + routeGrants.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: routeGrants.Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "RouteGrant", Plural: routeGrants.Resource, ListKind: "RouteGrantList", Singular: "routegrant"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: routeGrants.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptrTo(true)}}}},
		},
	}
	if err := cl.Create(ctx, crd); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "rt13-routegrants-admin", Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-admin": "true"}},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{routeGrants.Group}, Resources: []string{routeGrants.Resource}, Verbs: []string{"*"}}},
	}
	if err := cl.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	testcluster.Eventually(t, time.Minute, "RouteGrants served", func(ctx context.Context) error {
		_, err := dynamic.NewForConfigOrDie(c.Config).Resource(routeGrants).Namespace("default").List(ctx, metav1.ListOptions{})
		return err
	})
}

// grantChart writes, in each namespace it watches, a RouteGrant that lets
// the routes of its first namespace (where its gateway runs) reach the
// Services there: what a gateway operator watching several namespaces
// does.
func grantChart() map[string]string {
	return map[string]string{
		"Chart.yaml": chartYAML,
		"templates/grants.yaml": "{{- $home := first .Values.watchNamespaces }}\n{{- range .Values.watchNamespaces }}\n---\n" +
			"apiVersion: " + routeGrants.Group + "/" + routeGrants.Version + "\nkind: RouteGrant\nmetadata:\n  name: from-gateway\n  namespace: {{ . }}\n" +
			"spec:\n  from:\n  - kind: HTTPRoute\n    namespace: {{ $home }}\n  to:\n  - kind: Service\n{{- end }}\n",
	}
}

// Red team 13. The sweep of what earlier revisions left keeps a
// namespaced object whose live annotations say helm.sh/resource-policy:
// keep (keepLive, kube.go), and Holds stops holding a leaving namespace
// once that sweep is done. The guardrail tenant-managed-objects lists
// the kinds a release commonly holds, not the operators' own kinds
// aggregated into admin, so the owner may annotate the release's object
// of such a kind in any of its namespaces. Tenant A runs grantChart on a
// and b: a RouteGrant in b lets A's routes in a reach b's Services. The
// owner annotates that grant keep; the platform takes b back. Helm's
// upgrade keeps the grant, the sweep keeps it too, and b is handed back
// with A's grant in it, marked as A's (tenant label, A's release): the
// next holder of b has its Services open to A's routes. Before keepLive
// the sweep deleted it.
func TestAttack13KeptGrantOutlivesHandBack(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	installRouteGrants(t, c)
	startController(t, tenancy.Options{})
	name := "keepgrant-" + suffix()
	a, b := name+"-a", name+"-b"
	owner := "owner-" + name
	createTenant(t, newTenant(name, []string{a, b}, writeChart(t, grantChart()), 1, owner))
	t.Cleanup(func() {
		unfinalize(name)
		for _, ns := range []string{a, b} {
			_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})
	admin := dynamic.NewForConfigOrDie(c.Config)
	testcluster.Eventually(t, 2*time.Minute, "the RouteGrant in b installed", func(ctx context.Context) error {
		_, err := admin.Resource(routeGrants).Namespace(b).Get(ctx, "from-gateway", metav1.GetOptions{})
		return err
	})

	// The owner, admin in b, marks the release's grant there to be kept.
	patch := []byte(`{"metadata":{"annotations":{"helm.sh/resource-policy":"keep"}}}`)
	oc := dynamic.NewForConfigOrDie(c.As(owner))
	testcluster.Eventually(t, time.Minute, "the owner annotated the grant in b", func(ctx context.Context) error {
		_, err := oc.Resource(routeGrants).Namespace(b).Patch(ctx, "from-gateway", types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	})

	// The platform takes b back.
	setNamespaces(t, name, a)
	waitHandedBack(t, b, 3*time.Minute)
	tn := &tenancyv1.Tenant{}
	if err := cl.Get(ctx, client.ObjectKey{Name: name}, tn); err == nil {
		t.Logf("operators after hand-back: %s", dump(tn.Status.Operators))
	}
	// Give the controller a minute more to clean up.
	deadline := time.Now().Add(time.Minute)
	for {
		live, err := admin.Resource(routeGrants).Namespace(b).Get(ctx, "from-gateway", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Errorf("namespace %s handed back with tenant %s's RouteGrant from-gateway still in it (labels %v, annotations %v): "+
				"the owner's helm.sh/resource-policy: keep made the controller's sweep keep it (keepLive), and %s's routes still reach %s's Services",
				b, name, live.GetLabels(), live.GetAnnotations(), a, b)
			return
		}
		time.Sleep(2 * time.Second)
	}
}
