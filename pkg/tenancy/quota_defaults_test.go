package tenancy_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// TestDefaultQuota: a tenant with no operators gets the shipped default
// quota and container defaults; its owner's pod over the quota and its
// Secret past the count are refused.
func TestDefaultQuota(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	name := "defaults-" + suffix()
	createTenant(t, newTenant(name, []string{name}, "", 0, "owner-"+name))
	waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)

	shipped := tenancy.ShippedDefaultQuota()
	hard := quotaOf(t, name).Spec.Hard
	for k, v := range shipped.Hard {
		got, ok := hard[k]
		switch {
		case !ok:
			t.Errorf("quota has no %s", k)
		case strings.HasPrefix(string(k), "count/") || k == corev1.ResourcePersistentVolumeClaims:
			// Plus what the controller and the cluster put there.
			if got.Cmp(v) < 0 {
				t.Errorf("quota %s = %s, below the default %s", k, got.String(), v.String())
			}
		case got.Cmp(v) != 0:
			t.Errorf("quota %s = %s, want the default %s (the tenant has no operators)", k, got.String(), v.String())
		}
	}
	// The owners' RoleBinding, the actor's bindings: counted on top.
	if rb, d := hard["count/rolebindings.rbac.authorization.k8s.io"], shipped.Hard["count/rolebindings.rbac.authorization.k8s.io"]; rb.Value() <= d.Value() {
		t.Errorf("count/rolebindings %s: the controller's RoleBindings are not counted on top of the default %s", rb.String(), d.String())
	}
	lr := &corev1.LimitRange{}
	if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: tenancy.LimitRangeName}, lr); err != nil {
		t.Fatal(err)
	}
	if d := lr.Spec.Limits[0].DefaultRequest[corev1.ResourceCPU]; d.Cmp(shipped.DefaultRequest[corev1.ResourceCPU]) != 0 {
		t.Errorf("LimitRange default request cpu %s, want the shipped %s", d.String(), shipped.DefaultRequest.Cpu().String())
	}

	owner := kubernetes.NewForConfigOrDie(c.As("owner-" + name))
	over := shipped.Hard[corev1.ResourceRequestsCPU]
	over.Add(resource.MustParse("1"))
	if _, err := owner.CoreV1().Pods(name).Create(ctx, restrictedPod("too-big", over.String()), metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "exceeded quota") {
		t.Errorf("a pod of %s CPU: %v, want exceeded quota", over.String(), err)
	}
	secrets := hard["count/secrets"]
	existing, err := owner.CoreV1().Secrets(name).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	room := secrets.Value() - int64(len(existing.Items))
	created := int64(0)
	for ; created <= room; created++ {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s-%d", created)}}
		if _, err = owner.CoreV1().Secrets(name).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "exceeded quota") || created != room {
		t.Errorf("Secret %d of a count of %d (%d there before): %v, want exceeded quota at the count", created+1, secrets.Value(), len(existing.Items), err)
	}

	// An operator whose catalog cannot be read: no figures of its own, the
	// defaults still.
	unread := "defaults-unread-" + suffix()
	createTenant(t, bundleTenant(unread, tenancyv1.BundleSource{Catalog: tenancyv1.BundleCatalog{Image: "127.0.0.1:1/nothing/catalog:latest"},
		Package: olmPackage, Channel: "stable"}, "0.1.0"))
	testcluster.Eventually(t, 2*time.Minute, "the default quota of a tenant whose catalog cannot be read", func(ctx context.Context) error {
		q := &corev1.ResourceQuota{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: unread, Name: tenancy.QuotaName}, q); err != nil {
			return err
		}
		for _, k := range []corev1.ResourceName{corev1.ResourceRequestsCPU, corev1.ResourcePods, "count/secrets"} {
			if got, want := q.Spec.Hard[k], shipped.Hard[k]; got.Cmp(want) < 0 {
				return fmt.Errorf("quota %s = %s, want at least the default %s", k, got.String(), want.String())
			}
		}
		return nil
	})
}
