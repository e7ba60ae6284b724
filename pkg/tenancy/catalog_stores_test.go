package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// checkCatalogTenants checks the operator install in each namespace,
// runs a KVStore in each through its own operator (runStores), then the
// isolation of the first two tenants, that a resync writes nothing, and
// the quota the second one's bundle gives (instances: 2).
func checkCatalogTenants(t *testing.T, c *testcluster.Cluster, dc dynamic.Interface, install func(*testing.T, string), namespaces ...string) {
	t.Helper()
	for _, ns := range namespaces {
		install(t, ns)
	}
	runStores(t, c, dc, namespaces...)
	t.Run("isolation", func(t *testing.T) {
		checkIsolation(t, c, namespaces[0], namespaces[1], "owner-"+namespaces[0], olmSA, kvstores)
	})
	t.Run("steady state makes no writes", func(t *testing.T) {
		checkNoSteadyStateWrites(t, c, namespaces)
	})
	t.Run("quota from the bundle", func(t *testing.T) {
		q := &corev1.ResourceQuota{}
		if err := cl.Get(context.Background(), client.ObjectKey{Namespace: namespaces[1], Name: tenancy.QuotaName}, q); err != nil {
			t.Fatal(err)
		}
		if got := q.Spec.Hard["count/kvstores.kv.opctl.dev"]; got.Value() != 2 {
			t.Errorf("quota %v, want count/kvstores.kv.opctl.dev = 2 (instances)", q.Spec.Hard)
		}
	})
}

// runStores starts, in each namespace, the sample operator as a process
// with the ServiceAccount token of the catalog install, creates a
// KVStore "cache" and waits until it is Ready.
func runStores(t *testing.T, c *testcluster.Cluster, dc dynamic.Interface, namespaces ...string) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range namespaces {
		testcluster.StartOperator(t, managerBin, c.ServiceAccountKubeconfig(t, ns, olmSA), []string{"WATCH_NAMESPACE=" + ns},
			"--leader-elect", "--leader-election-namespace", ns)
		store := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kv.opctl.dev/v1alpha1", "kind": "KVStore", "metadata": map[string]any{"name": "cache"},
			"spec": map[string]any{"replicas": int64(1)},
		}}
		if _, err := dc.Resource(kvstores).Namespace(ns).Create(ctx, store, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range namespaces {
		testcluster.WaitReady(t, dc, kvstores, ns, "cache", 90*time.Second)
	}
}

// deleteTenants deletes each namespace's KVStore while its operator still
// runs to finalize it (README explains why), then the Tenants of the same
// names, and waits until they are gone and so is the namespace of a
// tenant with the Delete policy.
func deleteTenants(t *testing.T, dc dynamic.Interface, deleted string, names ...string) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range names {
		if err := dc.Resource(kvstores).Namespace(ns).Delete(ctx, "cache", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		testcluster.Eventually(t, time.Minute, "KVStore finalized", func(ctx context.Context) error {
			if _, err := dc.Resource(kvstores).Namespace(ns).Get(ctx, "cache", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("KVStore %s/cache: %v", ns, err)
			}
			return nil
		})
	}
	for _, name := range names {
		if err := cl.Delete(ctx, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	testcluster.Eventually(t, 3*time.Minute, "deleted tenants gone", func(ctx context.Context) error {
		for _, name := range names {
			if err := cl.Get(ctx, client.ObjectKey{Name: name}, &tenancyv1.Tenant{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("Tenant %s: %v", name, err)
			}
		}
		if err := cl.Get(ctx, client.ObjectKey{Name: deleted}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s: %v", deleted, err)
		}
		return nil
	})
}

// waitCondition waits until Tenant name has condition typ with reason
// and a message containing what.
func waitCondition(t *testing.T, name, typ, reason, what string) {
	t.Helper()
	waitTenant(t, name, 2*time.Minute, reason+" reported", func(tn *tenancyv1.Tenant) error {
		for _, cond := range tn.Status.Conditions {
			if cond.Type == typ && cond.Reason == reason && strings.Contains(cond.Message, what) {
				return nil
			}
		}
		return fmt.Errorf("conditions %s", dump(tn.Status.Conditions))
	})
}
