package tenancy_test

import (
	"context"
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// bindingOnlyChart is pruneChart without Role reader: for each namespace
// it watches, only the ClusterRoleBinding delegate-<ns> of ServiceAccount
// op there (cluster-scoped) and Service watch-<ns> in the release's
// namespace; no object of the release is in the watched namespace itself.
func bindingOnlyChart() map[string]string {
	files := map[string]string{}
	maps.Copy(files, pruneChart())
	files["templates/each.yaml"] = "{{- range .Values.watchNamespaces }}\n---\n" +
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: delegate-{{ . }}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: system:auth-delegator\n" +
		"subjects:\n- kind: ServiceAccount\n  name: op\n  namespace: {{ . }}\n---\n" +
		"apiVersion: v1\nkind: Service\nmetadata:\n  name: watch-{{ . }}\nspec:\n  selector:\n    app: op\n  ports:\n  - port: 8080\n{{- end }}\n"
	return files
}

// Red team 16. Holds keeps a leaving namespace while a stored revision
// names an object whose metadata.namespace is that namespace; a
// ClusterRoleBinding has none, whatever namespace its subjects are in.
// Attack 13's chart also wrote Role reader into each watched namespace,
// which is what held it. Tenant A runs bindingOnlyChart on a and b; its
// owner fills count/services in a. The platform takes b: the upgrade to
// a alone fails on the quota (Service single) before Helm deletes
// anything, so ClusterRoleBinding delegate-b stays; the rollback to
// revision 1 is refused (it binds op of b, no longer the tenant's); no
// revision names an object in b, so b is handed back while A's release
// binds b's ServiceAccount op cluster-wide, for as long as A's owner
// keeps its quota full.
func TestAttack16BindingOnlyNamespaceHandedBack(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name, a, b := historyTenant(t, c, "bindonly-", bindingOnlyChart())
	owner := "owner-" + name
	crbB := "opctl." + name + ".kv.delegate-" + b
	if _, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crbB, metav1.GetOptions{}); err != nil {
		t.Fatalf("the release's binding of op in b: %v", err)
	}
	setNamespaces(t, name, a)

	// For three minutes, b may be handed back only without the binding.
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		live := &corev1.Namespace{}
		if err := cl.Get(ctx, client.ObjectKey{Name: b}, live); err != nil {
			t.Fatal(err)
		}
		if live.Labels[tenancyv1.LabelTenant] == "" && live.Annotations[tenancyv1.AnnotationActor] == "" {
			crb, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crbB, metav1.GetOptions{})
			if err == nil {
				logRevisions(t, c, name, a)
				t.Fatalf("namespace %s handed back while tenant %s's ClusterRoleBinding %s binds its ServiceAccount op cluster-wide to %s (subjects %v): "+
					"no stored revision names an object in %s, so Holds never held it", b, name, crbB, crb.RoleRef.Name, crb.Subjects, b)
			}
			if !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			return
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("namespace %s still held after 3 minutes", b)

	// The owner frees its quota: the upgrade deploys and deletes the
	// binding; b is handed back without it.
	freeServices(t, c, owner, a)
	waitHandedBack(t, b, 6*time.Minute)
	if _, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, crbB, metav1.GetOptions{}); err == nil {
		t.Errorf("namespace %s handed back while ClusterRoleBinding %s binds its ServiceAccount op cluster-wide", b, crbB)
	} else if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}
