package tenancy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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

// pruneChart, for each namespace it watches, binds ServiceAccount op of
// that namespace cluster-wide (ClusterRoleBinding delegate-<ns>), gives
// it Role reader there and a Service watch-<ns> in the release's
// namespace; watching one namespace it adds Service single.
func pruneChart() map[string]string {
	return map[string]string{
		"Chart.yaml": chartYAML,
		"templates/each.yaml": "{{- range .Values.watchNamespaces }}\n---\n" +
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\n  namespace: {{ . }}\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get]\n---\n" +
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: delegate-{{ . }}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: system:auth-delegator\n" +
			"subjects:\n- kind: ServiceAccount\n  name: op\n  namespace: {{ . }}\n---\n" +
			"apiVersion: v1\nkind: Service\nmetadata:\n  name: watch-{{ . }}\nspec:\n  selector:\n    app: op\n  ports:\n  - port: 8080\n{{- end }}\n",
		"templates/single.yaml": "{{- if eq (len .Values.watchNamespaces) 1 }}\napiVersion: v1\nkind: Service\nmetadata:\n  name: single\nspec:\n  selector:\n    app: op\n  ports:\n  - port: 8080\n{{- end }}\n",
	}
}

// Red team 13. Holds and the sweep know an upgrade's objects only from
// its stored revision, and Helm pruned stored revisions past MaxHistory
// (the last deployed one kept). A failed upgrade whose rollback would
// re-enter a leaving namespace is retried forward (upgrade_retry.go), each
// failed try a new revision; when the spec changed between the failure
// and the tries, the first failed revision's objects are named by no
// later one. Tenant A runs pruneChart on a and b; its owner fills
// count/services in a. The platform moves A from b to c: the upgrade
// creates ClusterRoleBinding delegate-c (op of c, cluster-wide) and Role
// reader in c, then the quota refuses Service watch-c; b is leaving, so
// no rollback. The platform takes c back too: every try of the upgrade to
// a alone fails on the quota (Service single), and Helm's pruning dropped
// the revision that named c, so c was handed back with op of c bound
// cluster-wide. Now the controller prunes (prune.go): the tries go, and
// the revision that named c goes only once what it alone named (the
// binding, Role reader in c) is deleted. MaxHistory 2 makes the third
// try prune.
func TestAttack13PrunedRevisionOrphansBinding(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{MaxHistory: 2})
	name, a, _ := historyTenant(t, c, "prune-", pruneChart(), "-c")
	nsC, owner := name+"-c", "owner-"+name
	crbC := "opctl." + name + ".kv.delegate-" + nsC
	setNamespaces(t, name, a, nsC)
	testcluster.Eventually(t, 2*time.Minute, "the failed upgrade's binding of op in c", func(ctx context.Context) error {
		_, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crbC, metav1.GetOptions{})
		return err
	})
	setNamespaces(t, name, a)

	// The tries (revisions 3 on, each naming what the next names) are
	// pruned past MaxHistory; revision 2, the only one naming c, only
	// once the binding is gone.
	stored := func(ctx context.Context, v int) (bool, error) { return revisionStored(ctx, c, name, a, v) }
	testcluster.Eventually(t, 4*time.Minute, "a later try pruned revision 3", func(ctx context.Context) error {
		later, err := stored(ctx, 4)
		if err != nil || !later {
			return fmt.Errorf("revision 4 not stored yet (%v)", err)
		}
		if three, err := stored(ctx, 3); err != nil || three {
			return fmt.Errorf("revision 3 still stored (%v)", err)
		}
		return nil
	})
	two, err := stored(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, berr := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crbC, metav1.GetOptions{}); !two && !apierrors.IsNotFound(berr) {
		logRevisions(t, c, name, a)
		t.Fatalf("revision 2, the only record of ClusterRoleBinding %s, was pruned while the binding exists (%v)", crbC, berr)
	}
	t.Logf("revision 2 stored: %v", two)

	// The owner frees its quota: the next try deploys, its sweep deletes
	// the binding, and b and c leave.
	freeServices(t, c, owner, a)
	deadline := time.Now().Add(6 * time.Minute)
	for {
		live := &corev1.Namespace{}
		if err := cl.Get(ctx, client.ObjectKey{Name: nsC}, live); err != nil {
			t.Fatal(err)
		}
		if live.Labels[tenancyv1.LabelTenant] == "" && live.Annotations[tenancyv1.AnnotationActor] == "" {
			break
		}
		if time.Now().After(deadline) {
			logRevisions(t, c, name, a)
			t.Fatalf("namespace %s still held 6 minutes after the owner freed its quota", nsC)
		}
		time.Sleep(2 * time.Second)
	}
	if _, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crbC, metav1.GetOptions{}); err == nil {
		_, rerr := c.Client.RbacV1().Roles(nsC).Get(ctx, "reader", metav1.GetOptions{})
		logRevisions(t, c, name, a)
		t.Errorf("namespace %s handed back while ClusterRoleBinding %s binds its ServiceAccount op cluster-wide (Role reader there: %v)", nsC, crbC, rerr == nil)
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	testcluster.Eventually(t, 2*time.Minute, "the history pruned to MaxHistory once swept", func(ctx context.Context) error {
		if two, err := stored(ctx, 2); err != nil || two {
			return fmt.Errorf("revision 2 still stored (%v)", err)
		}
		return nil
	})
}

// historyTenant creates a Tenant named prefix and a suffix running the
// chart files on its namespaces a and b, whose owner fills count/services
// in a once the release is installed; cleanup deletes the release's
// bindings of op and the namespaces, those named extra too.
func historyTenant(t *testing.T, c *testcluster.Cluster, prefix string, files map[string]string, extra ...string) (name, a, b string) {
	t.Helper()
	name = prefix + suffix()
	a, b = name+"-a", name+"-b"
	owner := "owner-" + name
	createTenant(t, newTenant(name, []string{a, b}, writeChart(t, files), 1, owner))
	t.Cleanup(func() {
		unfinalize(name)
		for _, sfx := range append([]string{"-a", "-b"}, extra...) {
			ns := name + sfx
			_ = c.Client.RbacV1().ClusterRoleBindings().Delete(context.Background(), "opctl."+name+".kv.delegate-"+ns, metav1.DeleteOptions{})
			_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	})
	testcluster.Eventually(t, 2*time.Minute, "the release on a and b installed", func(ctx context.Context) error {
		_, err := c.Client.CoreV1().Services(a).Get(ctx, "watch-"+b, metav1.GetOptions{})
		return err
	})
	t.Logf("owner created %d Services in %s", fillServices(t, c, owner, a), a)
	return name, a, b
}

// logRevisions logs Tenant name's operator status and the stored
// revisions of its release kv in ns.
func logRevisions(t *testing.T, c *testcluster.Cluster, name, ns string) {
	t.Helper()
	tn := &tenancyv1.Tenant{}
	if err := cl.Get(context.Background(), client.ObjectKey{Name: name}, tn); err == nil {
		t.Logf("operators: %s", dump(tn.Status.Operators))
	}
	for v := 1; v <= 12; v++ {
		key := storageKey(name, ns, v)
		if _, err := c.Client.CoreV1().Secrets(tenancy.DefaultStorageNamespace).Get(context.Background(), key, metav1.GetOptions{}); err == nil {
			rel := storedRelease(t, name, ns, "kv", v)
			t.Logf("revision %d: %s: %s", v, rel.Info.Status, rel.Info.Description)
		}
	}
}

// revisionStored reports whether revision v of release kv of tenant in
// ns is in the controller's storage.
func revisionStored(ctx context.Context, c *testcluster.Cluster, tenant, ns string, v int) (bool, error) {
	_, err := c.Client.CoreV1().Secrets(tenancy.DefaultStorageNamespace).Get(ctx, storageKey(tenant, ns, v), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// storageKey is the name of revision v of release kv of tenant in ns in
// the controller's storage.
func storageKey(tenant, ns string, v int) string {
	return fmt.Sprintf("sh.helm.release.v1.%s.%s.%s.v%d", tenant, ns, "kv", v)
}
