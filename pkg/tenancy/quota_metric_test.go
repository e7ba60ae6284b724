package tenancy_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// TestQuotaMetricHostile: a tenant's namespace admin cannot make the
// controller report a quota for another tenant, nor take its own quota's
// place: the forged quotas are refused or not reported.
func TestQuotaMetricHostile(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	stop := startController(t, tenancy.Options{})
	defer stop()
	id := suffix()
	a, b := "qm-a-"+id, "qm-b-"+id
	// An operator's platform-as-code sets a's quota.
	createTenant(t, newTenant(a, []string{a}, sampleChart(t, "", "0.1.0"), 1, "owner-"+a))
	createTenant(t, newTenant(b, []string{b}, "", 0, "owner-"+b))
	waitTenant(t, a, 2*time.Minute, "Tenant Ready", ready)
	victim := waitTenant(t, b, time.Minute, "Tenant Ready", ready)
	admin := kubernetes.NewForConfigOrDie(c.As("owner-" + a))
	// RBAC sees the owner's binding a moment after the controller made it.
	if err := waitFor(10*time.Second, func() error {
		_, err := admin.CoreV1().ResourceQuotas(a).List(ctx, metav1.ListOptions{})
		return err
	}); err != nil {
		t.Fatalf("the owner cannot list quotas in its namespace: %v", err)
	}
	forged := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "forged", Namespace: a, Labels: map[string]string{tenancyv1.LabelTenant: b},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: tenancyv1.GroupVersion.String(), Kind: "Tenant", Name: b,
				UID: victim.UID, Controller: ptr.To(true)}}},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}},
	}
	_, createErr := admin.CoreV1().ResourceQuotas(a).Create(ctx, forged, metav1.CreateOptions{})
	deleteErr := admin.CoreV1().ResourceQuotas(a).Delete(ctx, tenancy.QuotaName, metav1.DeleteOptions{})
	t.Logf("forged quota: %v; deleting the tenant's quota: %v", createErr, deleteErr)
	if createErr == nil {
		t.Logf("the namespace admin made a quota labelled and owned for tenant %s: it must not be reported", b)
	}
	if deleteErr == nil {
		t.Errorf("the namespace admin deleted the controller's quota %s/%s", a, tenancy.QuotaName)
	}
	// Give the cache time to see whatever was made, then read the metrics.
	time.Sleep(2 * time.Second)
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sawOwn := false
	for _, f := range families {
		if f.GetName() != "opctl_tenancy_quota_utilisation_ratio" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["namespace"] == a && l["tenant"] != a {
				t.Errorf("a quota in %s is reported for tenant %s", a, l["tenant"])
			}
			sawOwn = sawOwn || (l["namespace"] == a && l["tenant"] == a)
		}
	}
	if !sawOwn {
		t.Errorf("no quota series for tenant %s", a)
	}
}

func waitFor(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}
