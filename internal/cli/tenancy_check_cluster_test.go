package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/auth/rbac/validation"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy/policy"
	"opctl.dev/opctl/pkg/validate"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster)) }

// With a cluster, opctl tenancy check reads the platform's ClusterRoles
// from the tenancy controller's ConfigMap for a bundle as for a chart, and
// asks the cluster's discovery which resources are cluster-scoped, as the
// controller's bundle backend does: a rule on a cluster-scoped custom
// resource, namespaced offline, is a cluster-wide rule there.
func TestClusterTenancyCheckBundle(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	id := fmt.Sprintf("%d", time.Now().UnixNano()%1e9)
	ns, role, group := "tcheck-"+id, "nodes-reader-"+id, "tcheck"+id+".example.com"

	// nodewatchBundle, its controller also reading the globals of group,
	// which this cluster serves cluster-scoped.
	bundle := editedBundle(t, "        - apiGroups: [storage.k8s.io]\n",
		"        - apiGroups: ["+group+"]\n          resources: [globals]\n          verbs: [get]\n        - apiGroups: [storage.k8s.io]\n")

	crds := apiextensionsclient.NewForConfigOrDie(c.Config).ApiextensionsV1().CustomResourceDefinitions()
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "globals." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "globals", Singular: "global", Kind: "Global", ListKind: "GlobalList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}}}}}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}) })
	testcluster.Eventually(t, time.Minute, "discovery serves "+group, func(context.Context) error {
		_, err := c.Client.Discovery().ServerResourcesForGroupVersion(group + "/v1")
		return err
	})
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	if _, err := c.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client.RbacV1().ClusterRoles().Delete(context.Background(), role, metav1.DeleteOptions{})
	})
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "opctl-tenant-cluster-roles"},
		Data: map[string]string{"clusterRoles": role}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	globals := "ClusterRole opctl.tenant.nodewatch.nodewatch-controller-0 grants cluster-wide get on " + group + "/globals"
	// Offline, the rule on globals is namespaced: a Role in the tenant's
	// namespaces, on a kind neither admin nor the bundle's CRDs hold, which
	// the controller would refuse as such.
	globalsRole := "Role tenant/nodewatch-nodewatch-controller-cluster-0 grants get " + group + "/globals in the tenant's namespaces, beyond what its owners hold (admin) and the operator's own kinds"
	for _, tc := range []struct {
		name     string
		args     []string
		roles    []string
		refusals []string
	}{
		{"offline: globals are namespaced, nodes refused", []string{"--offline"}, []string{}, []string{priorityClassRefusal, nodesRefusal, globalsRole}},
		{"the cluster: its role allows nodes, globals are cluster-scoped", []string{"--kubeconfig", c.Kubeconfig, "--storage-namespace", ns}, []string{role}, []string{priorityClassRefusal, globals}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, append(append([]string{"tenancy", "check", "-o", "json"}, tc.args...), bundle)...)
			var v validate.TenantVerdict
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("exit %d, stdout %q, stderr %q: %v", code, out, errOut, err)
			}
			if got := refusalMessages(v); code != 1 || !slices.Equal(got, tc.refusals) || !slices.Equal(v.ClusterRoles, tc.roles) {
				t.Errorf("exit %d, refusals %q, roles %v; want %q, %v", code, got, v.ClusterRoles, tc.refusals, tc.roles)
			}
		})
	}
}

// With a cluster, opctl tenancy check judges a release's Roles against
// the admin ClusterRole as the cluster serves it: a rule on a kind that a
// ClusterRole aggregated into admin grants is refused offline (Kubernetes'
// built-in admin) and before the aggregation, and fits after it. The
// built-in admin rules the offline judgement uses are those the cluster's
// bootstrap policy gives admin, in its order, so the generated file
// (pkg/tenancy/policy/zz_generated.admin.go) cannot go stale silently.
func TestClusterTenancyCheckOwnerRole(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()

	builtin, err := testcluster.BuiltinClusterRoleRules(ctx, c.Client, policy.OwnerRole)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(builtin, policy.BuiltinOwnerRules) {
		t.Errorf("the cluster's bootstrap admin has %d rules, policy.BuiltinOwnerRules %d: run make generate\ncluster: %v\noffline: %v", len(builtin), len(policy.BuiltinOwnerRules), builtin, policy.BuiltinOwnerRules)
	}
	live, err := c.Client.RbacV1().ClusterRoles().Get(ctx, policy.OwnerRole, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, missing := validation.Covers(live.Rules, policy.BuiltinOwnerRules); !ok {
		t.Errorf("the live admin ClusterRole lacks built-in rules: %v", missing)
	}
	info, err := c.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if minor := strings.TrimSuffix(info.Major+"."+info.Minor, "+"); minor != policy.BuiltinKubernetes {
		t.Errorf("the cluster runs Kubernetes %s, the built-in admin rules are of %s: run make generate", minor, policy.BuiltinKubernetes)
	}

	id := fmt.Sprintf("%d", time.Now().UnixNano()%1e9)
	group, ns, aggregate := "tcheck"+id+".example.com", "tcheck-owner-"+id, "tcheck-gizmos-"+id
	chart := t.TempDir()
	for name, body := range map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: gizmo-reader\nversion: 0.1.0\n",
		"templates/role.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: gizmo-reader\n  namespace: {{ .Release.Namespace }}\n" +
			"rules:\n  - apiGroups: [" + group + "]\n    resources: [gizmos]\n    verbs: [get, list, watch]\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(chart, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(chart, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	refusal := "Role validate/gizmo-reader grants get,list,watch " + group + "/gizmos in the tenant's namespaces, beyond what its owners hold (admin) and the operator's own kinds"
	online := []string{"--kubeconfig", c.Kubeconfig, "--storage-namespace", ns}
	check := func(name string, args []string, owner string, refusals []string) {
		t.Helper()
		code, out, errOut := run(t, append(append([]string{"tenancy", "check", "-o", "json"}, args...), chart)...)
		var v validate.TenantVerdict
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q: %v", name, code, out, errOut, err)
		}
		if got := refusalMessages(v); code != min(len(refusals), 1) || !slices.Equal(got, refusals) || v.OwnerRole != owner {
			t.Errorf("%s: exit %d, refusals %q, owner role %q; want %q, %q", name, code, got, v.OwnerRole, refusals, owner)
		}
	}
	check("offline", []string{"--offline"}, validate.BuiltinOwnerRole, []string{refusal})
	check("the cluster's admin, before the aggregation", online, validate.ClusterOwnerRole, []string{refusal})

	if _, err := c.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: aggregate, Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-admin": "true"}},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{group}, Resources: []string{"gizmos"}, Verbs: []string{"get", "list", "watch"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client.RbacV1().ClusterRoles().Delete(context.Background(), aggregate, metav1.DeleteOptions{})
	})
	testcluster.Eventually(t, time.Minute, "admin aggregates "+aggregate, func(ctx context.Context) error {
		admin, err := c.Client.RbacV1().ClusterRoles().Get(ctx, policy.OwnerRole, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(admin.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.APIGroups, group) }) {
			return fmt.Errorf("admin has no rule of %s yet", group)
		}
		return nil
	})
	check("the cluster's admin, after the aggregation", online, validate.ClusterOwnerRole, nil)
	check("offline, after the aggregation", []string{"--offline"}, validate.BuiltinOwnerRole, []string{refusal})
}
