package testcluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Namespace creates a namespace with a generated name from prefix and the
// given labels, waits for its default ServiceAccount (pods are rejected
// before it exists), and deletes it when the test ends.
func (c *Cluster) Namespace(t testing.TB, prefix string, labels map[string]string) string {
	t.Helper()
	ctx := context.Background()
	ns, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: labels},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		err := c.Client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", ns.Name, err)
		}
	})
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.waitFor(wctx, "default ServiceAccount in "+ns.Name, func(ctx context.Context) error {
		return c.serviceAccountExists(ctx, ns.Name, "default")
	}); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func (c *Cluster) serviceAccountExists(ctx context.Context, namespace, name string) error {
	if _, err := c.Client.CoreV1().ServiceAccounts(namespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("%w: ServiceAccount %s/%s: %v", errNotReady, namespace, name, err)
	}
	return nil
}
