package tenancy_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// A profile sets headroom and the Pod Security level and limits chart
// sources; the quota follows spec changes.
func TestProfileAndQuotaUpdates(t *testing.T) {
	testcluster.Require(t, cluster)
	ctx := context.Background()
	startController(t, tenancy.Options{})
	chart := sampleChart(t, "", "0.1.0")
	id := suffix()
	zero := int32(0)
	profile := &tenancyv1.TenantProfile{ObjectMeta: metav1.ObjectMeta{Name: "profile-" + id}, Spec: tenancyv1.TenantProfileSpec{
		HeadroomPercent: &zero, PodSecurity: "baseline", AllowedSources: []string{chart},
		DefaultQuota: &tenancyv1.DefaultQuota{Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse("1")}},
	}}
	if err := cl.Create(ctx, profile); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Delete(context.Background(), profile) })

	name := "profiled-" + id
	tn := newTenant(name, []string{name}, chart, 1)
	tn.Spec.Profile = profile.Name
	createTenant(t, tn)
	waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
	quota := func() corev1.ResourceList {
		q := &corev1.ResourceQuota{}
		if err := cl.Get(ctx, client.ObjectKey{Namespace: name, Name: tenancy.QuotaName}, q); err != nil {
			t.Fatal(err)
		}
		return q.Spec.Hard
	}
	// No headroom: 10m for the operator + 1 × (110m KVStore + 10m KVBackup),
	// + the profile's default 1.
	if got := quota()[corev1.ResourceRequestsCPU]; got.Cmp(resource.MustParse("1130m")) != 0 {
		t.Errorf("requests.cpu %s with 0%% headroom and a default of 1, want 1130m", got.String())
	}
	// The profile's default quota replaces the shipped one.
	if got, ok := quota()["count/secrets"]; ok {
		t.Errorf("count/secrets %s: the profile's default quota sets none", got.String())
	}
	ns := &corev1.Namespace{}
	if err := cl.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil || ns.Labels["pod-security.kubernetes.io/enforce"] != "baseline" {
		t.Errorf("namespace labels %v (%v), want the profile's baseline level", ns.Labels, err)
	}

	testcluster.UpdateObject(t, cl, &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: name}}, func(tn *tenancyv1.Tenant) {
		tn.Spec.Operators[0].Instances = 4
	})
	testcluster.Eventually(t, time.Minute, "quota follows instances", func(context.Context) error {
		hard := quota()
		if c := hard["count/kvstores.kv.opctl.dev"]; c.Value() != 4 {
			return fmt.Errorf("count/kvstores %s", c.String())
		}
		// 10m for the operator + 4 × (110m + 10m), + the default 1.
		if cpu := hard[corev1.ResourceRequestsCPU]; cpu.Cmp(resource.MustParse("1490m")) != 0 {
			return fmt.Errorf("requests.cpu %s, want 1490m", cpu.String())
		}
		return nil
	})

	other := "refused-" + id
	bad := newTenant(other, []string{other}, sampleChart(t, "", "0.2.0"), 1)
	bad.Spec.Profile = profile.Name
	createTenant(t, bad)
	waitTenant(t, other, time.Minute, "a chart from elsewhere refused", func(tn *tenancyv1.Tenant) error {
		return testcluster.HasCondition(tn.Status.Conditions, operatorkit.ConditionDegraded, metav1.ConditionTrue, "SourceNotAllowed")
	})
}
