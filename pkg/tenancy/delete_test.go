package tenancy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

func releaseSecrets(ctx context.Context, ns string) (int, error) {
	var secrets corev1.SecretList
	err := cl.List(ctx, &secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": "kv"})
	return len(secrets.Items), err
}

func tenantGone(t *testing.T, name string) {
	t.Helper()
	testcluster.Eventually(t, 2*time.Minute, "Tenant "+name+" gone", func(ctx context.Context) error {
		err := cl.Get(ctx, client.ObjectKey{Name: name}, &tenancyv1.Tenant{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
}

// Delete uninstalls the release and deletes the namespaces, leaving
// nothing behind; Orphan disconnects and leaves everything running.
func TestDeletion(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	chart := sampleChart(t, "", "0.1.0")
	id := suffix()

	t.Run("Delete", func(t *testing.T) {
		name := "del-" + id
		nss := []string{name + "-a", name + "-b"}
		createTenant(t, newTenant(name, nss, chart, 1))
		waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
		if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
		tenantGone(t, name)
		if n, err := storedRecords(ctx, name); err != nil || n != 0 {
			t.Errorf("release records of %s left in the storage namespace after Delete: %d, %v", name, n, err)
		}
		for _, ns := range nss {
			if err := cl.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
				t.Errorf("namespace %s after Delete: %v, want NotFound", ns, err)
			}
		}
		var roles rbacv1.ClusterRoleList
		if err := cl.List(ctx, &roles, client.MatchingLabels{"app.kubernetes.io/instance": "kv"}); err != nil {
			t.Fatal(err)
		}
		for _, r := range roles.Items {
			if r.Name == "kv-sample-operator-"+nss[0]+"-editor-role" || r.Name == "kv-sample-operator-"+nss[0]+"-viewer-role" {
				t.Errorf("ClusterRole %s left behind by Delete", r.Name)
			}
		}
	})

	t.Run("Orphan", func(t *testing.T) {
		name := "orphan-" + id
		tn := newTenant(name, []string{name}, chart, 1)
		tn.Spec.DeletionPolicy = operatorkit.DeletionOrphan
		createTenant(t, tn)
		waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
		t.Cleanup(func() {
			_ = cl.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		})
		if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
		tenantGone(t, name)
		ns := &corev1.Namespace{}
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil || !ns.DeletionTimestamp.IsZero() {
			t.Fatalf("namespace after Orphan: %v (deleting: %v)", err, ns.DeletionTimestamp)
		}
		if _, ok := ns.Labels[tenancyv1.LabelTenant]; ok || len(ns.OwnerReferences) > 0 {
			t.Errorf("orphaned namespace still tied to the tenant: labels %v, owners %v", ns.Labels, ns.OwnerReferences)
		}
		q := &corev1.ResourceQuota{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: tenancy.QuotaName}, q); err != nil || len(q.OwnerReferences) > 0 {
			t.Errorf("quota after Orphan: %v, owners %v", err, q.OwnerReferences)
		}
		if n, err := releaseSecrets(ctx, name); err != nil || n != 1 {
			t.Errorf("release records in %s after Orphan: %d, %v; want the release handed back", name, n, err)
		}
		if n, err := storedRecords(ctx, name); err != nil || n != 0 {
			t.Errorf("release records of %s left in the storage namespace after Orphan: %d, %v", name, n, err)
		}
		time.Sleep(2 * time.Second) // the garbage collector would act by now
		deps, err := cluster.Client.AppsV1().Deployments(name).List(ctx, metav1.ListOptions{})
		if err != nil || len(deps.Items) != 1 || deps.Items[0].Status.ReadyReplicas != 1 {
			t.Errorf("operator after Orphan: %v, %v", deps, err)
		}
	})
}
