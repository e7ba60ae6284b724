package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/internal/testcluster"
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
	for _, tc := range []struct {
		name     string
		args     []string
		roles    []string
		refusals []string
	}{
		{"offline: globals are namespaced, nodes refused", []string{"--offline"}, []string{}, []string{priorityClassRefusal, nodesRefusal}},
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
