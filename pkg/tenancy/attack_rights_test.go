package tenancy_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testregistry"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// tokenAs mints, as user, a token of ServiceAccount ns/name (what admin
// in ns allows) and returns a config that uses only that token.
func tokenAs(t *testing.T, c *testcluster.Cluster, user, ns, name string) *rest.Config {
	t.Helper()
	tr, err := kubernetes.NewForConfigOrDie(c.As(user)).CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("minting a token of %s/%s as %s: %v", ns, name, user, err)
	}
	return &rest.Config{Host: c.Config.Host, TLSClientConfig: rest.TLSClientConfig{CAData: c.Config.CAData, CAFile: c.Config.CAFile}, BearerToken: tr.Status.Token}
}

func ptrTo[T any](v T) *T { return &v }

// writeChart writes a chart of files (path: content) and returns its
// directory.
func writeChart(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for f, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// publishGreedy publishes the sample's bundle 0.1.0, its CSV asking for
// rules in clusterPermissions too, to a registry it returns.
func publishGreedy(t *testing.T, rules ...any) *testregistry.Registry {
	t.Helper()
	reg := testregistry.Start(t)
	publishEdited(t, reg, sampleProject, t.TempDir(), "0.1.0", func(csv map[string]any) {
		perms := csv["spec"].(map[string]any)["install"].(map[string]any)["spec"].(map[string]any)["clusterPermissions"].([]any)
		p := perms[0].(map[string]any)
		p["rules"] = append(p["rules"].([]any), rules...)
	})
	return reg
}

// The operator's ServiceAccount is the owner's (issue "A tenant is its
// namespaces", item 2): a CSV that asks for Secrets cluster-wide gets
// them in the tenant's namespaces only, so the owner, with a token it
// mints for its operator, reads neither another tenant's Secrets nor the
// controller's storage; and a release that asks for cluster-scoped rights
// the platform did not name is refused, with the rules named, before
// anything is installed.
func TestOperatorRightsStayInTheTenant(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	reg := publishGreedy(t, map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"get", "list", "watch"}})
	startController(t, tenancy.Options{PlainHTTPRegistries: true})

	id := suffix()
	victim := "victim-" + id
	createTenant(t, newTenant(victim, []string{victim}, "", 0, "owner-"+victim))
	waitTenant(t, victim, time.Minute, "victim Ready", ready)
	if _, err := c.Client.CoreV1().Secrets(victim).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "data"}, StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	name := "rights-" + id
	owner := "owner-" + name
	createTenant(t, bundleTenant(name, tenancyv1.BundleSource{Catalog: tenancyv1.BundleCatalog{Image: reg.Host + "/ops/sample-operator-catalog:latest"},
		Package: olmPackage, Channel: "stable"}, "0.1.0"))
	waitTenant(t, name, 2*time.Minute, "bundle tenant on 0.1.0", bundleAt("0.1.0", 1))
	operator := kubernetes.NewForConfigOrDie(tokenAs(t, c, owner, name, olmSA))
	if _, err := operator.CoreV1().Secrets(name).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the operator listing Secrets in its own namespace: %v, want allowed", err)
	}
	for _, ns := range []string{victim, tenancy.DefaultStorageNamespace, "kube-system", ""} {
		if _, err := operator.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("the owner, with its operator's token, listing Secrets in %q: %v, want Forbidden", ns, err)
		}
	}
	if clusterAdmin(t, c, owner) {
		t.Errorf("owner %s is cluster-admin", owner)
	}

	// A chart whose ClusterRoleBinding grants what the platform did not
	// name, and binds cluster-admin to the owner.
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: greedy\nversion: 0.1.0\n",
		"templates/rbac.yaml": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ .Release.Name }}-nodes
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ .Release.Name }}-nodes
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ .Release.Name }}-nodes
subjects:
- kind: ServiceAccount
  name: default
  namespace: {{ .Release.Namespace }}
---
` + adminBinding("{{ .Release.Name }}-owner", "owner-greedy-"+id, ""),
	}
	chart := writeChart(t, files)
	greedy := "greedy-" + id
	createTenant(t, newTenant(greedy, []string{greedy}, chart, 1, "owner-"+greedy))
	for _, what := range []string{"grants list nodes cluster-wide", "binds ClusterRole cluster-admin", "to User owner-" + greedy} {
		waitCondition(t, greedy, "Degraded", tenancyv1.ReasonClusterRightsRefused, what)
	}
	bindings, err := c.Client.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bindings.Items {
		for _, s := range b.Subjects {
			if s.Namespace == greedy || s.Name == "owner-"+greedy {
				t.Errorf("ClusterRoleBinding %s grants %s/%s", b.Name, s.Namespace, s.Name)
			}
		}
	}
	if clusterAdmin(t, c, "owner-"+greedy) {
		t.Errorf("owner-%s is cluster-admin", greedy)
	}
}
