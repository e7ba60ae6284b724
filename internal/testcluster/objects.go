package testcluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WaitObject re-reads obj (by its namespace and name) with cl until check
// passes or timeout ends, and leaves the last read in obj.
func WaitObject[T client.Object](t testing.TB, cl client.Client, obj T, timeout time.Duration, what string, check func(T) error) {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	Eventually(t, timeout, what, func(ctx context.Context) error {
		if err := cl.Get(ctx, key, obj); err != nil {
			return err
		}
		return check(obj)
	})
}

// UpdateObject re-reads obj, applies mutate and updates it, retrying on
// conflicts with controllers writing the same object.
func UpdateObject[T client.Object](t testing.TB, cl client.Client, obj T, mutate func(T)) {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cl.Get(context.Background(), key, obj); err != nil {
			return err
		}
		mutate(obj)
		return cl.Update(context.Background(), obj)
	})
	if err != nil {
		t.Fatalf("updating %s: %v", key, err)
	}
}

// HasCondition checks that conds has typ with status and, unless empty,
// reason.
func HasCondition(conds []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) error {
	c := meta.FindStatusCondition(conds, typ)
	if c == nil || c.Status != status || (reason != "" && c.Reason != reason) {
		return fmt.Errorf("condition %s = %+v, want %s/%s", typ, c, status, reason)
	}
	return nil
}

// ReadyAt checks Ready=True with status.observedGeneration equal to the
// object's generation.
func ReadyAt(obj client.Object, conds []metav1.Condition, observed int64) error {
	if err := HasCondition(conds, "Ready", metav1.ConditionTrue, ""); err != nil {
		return err
	}
	if observed != obj.GetGeneration() {
		return fmt.Errorf("observedGeneration %d, generation %d", observed, obj.GetGeneration())
	}
	return nil
}

// WaitReady waits until the namespace/name object of resource has the
// condition Ready=True.
func WaitReady(t testing.TB, dc dynamic.Interface, resource schema.GroupVersionResource, namespace, name string, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, fmt.Sprintf("%s %s/%s Ready", resource.Resource, namespace, name), func(ctx context.Context) error {
		u, err := dc.Resource(resource).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, cond := range conds {
			if m, ok := cond.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
				return nil
			}
		}
		return fmt.Errorf("not Ready: %v", conds)
	})
}
