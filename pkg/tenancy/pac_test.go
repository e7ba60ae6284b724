package tenancy_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/internal/testproject"
	"opctl.dev/opctl/pkg/tenancy"
	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// The platform-as-code contract end to end: opctl package writes an
// operand's figures (replicas 1 and 3, two 2Gi volumes per replica), the
// controller reads them for a tenant of 2 instances, and every quota
// figure matches a hand computation. The operator is 10m/64Mi requests
// and 500m/256Mi limits; one operand pod 110m/144Mi and 600m/320Mi (the
// server and its exporter sidecar); one KVBackup Job pod per instance
// 10m/32Mi and 200m/128Mi; headroom 20% on CPU and memory (memory
// rounded up to Mi). The tenants' profile sets no default quota, which
// would add to every figure (TestDefaultQuota).
func TestPlatformAsCodeQuotaRoundTrip(t *testing.T) {
	testcluster.Require(t, cluster)
	startController(t, tenancy.Options{})
	profile := &tenancyv1.TenantProfile{ObjectMeta: metav1.ObjectMeta{Name: "pac-" + suffix()},
		Spec: tenancyv1.TenantProfileSpec{DefaultQuota: &tenancyv1.DefaultQuota{}}}
	if err := cl.Create(t.Context(), profile); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Delete(context.Background(), profile) })
	cases := []struct {
		replicas int
		want     map[corev1.ResourceName]string
	}{
		{1, map[corev1.ResourceName]string{
			"requests.cpu": "300m", "requests.memory": "500Mi", "limits.cpu": "2520m", "limits.memory": "1383Mi",
			"pods": "5", "persistentvolumeclaims": "4", "requests.storage": "8Gi",
		}},
		{3, map[corev1.ResourceName]string{
			"requests.cpu": "828m", "requests.memory": "1191Mi", "limits.cpu": "5400m", "limits.memory": "2919Mi",
			"pods": "9", "persistentvolumeclaims": "12", "requests.storage": "24Gi",
		}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("replicas %d", tc.replicas), func(t *testing.T) {
			id := suffix()
			group := "pac" + id + ".opctl.dev"
			t.Cleanup(func() {
				_ = cl.Delete(t.Context(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "kvstores." + group}})
			})
			dir, _ := testproject.UnderGroup(t, sampleProject, group)
			testproject.Edit(t, filepath.Join(dir, "opctl.yaml"), func(s string) string {
				s = strings.Replace(s, "    replicas: 1\n", fmt.Sprintf("    replicas: %d\n    pvcsPerReplica: 2\n", tc.replicas), 1)
				edited := strings.Replace(s, "requests: {cpu: 110m, memory: 144Mi}", "requests: {cpu: 110m, memory: 144Mi, storage: 2Gi}", 1)
				if edited == s {
					t.Fatal("opctl.yaml of the sample has no operand requests line to edit")
				}
				return edited
			})
			name := "pac-" + id
			tn := newTenant(name, []string{name}, sampleChart(t, dir, "0.1.0"), 2)
			tn.Spec.Profile = profile.Name
			createTenant(t, tn)
			waitTenant(t, name, 2*time.Minute, "Tenant Ready", ready)
			want := map[corev1.ResourceName]string{"count/kvstores." + corev1.ResourceName(group): "2", "count/kvbackups." + corev1.ResourceName(group): "2", "services.nodeports": "0", "services.loadbalancers": "0"}
			for k, v := range tc.want {
				want[k] = v
			}
			hard := quotaOf(t, name).Spec.Hard
			for k, v := range want {
				if got, ok := hard[k]; !ok || got.Cmp(resource.MustParse(v)) != 0 {
					t.Errorf("quota %s = %s, want %s", k, got.String(), v)
				}
			}
			for k := range hard {
				if _, ok := want[k]; !ok {
					t.Errorf("quota has %s, which the hand computation has not", k)
				}
			}
			tn = &tenancyv1.Tenant{}
			if err := cl.Get(t.Context(), client.ObjectKey{Name: name}, tn); err == nil {
				t.Logf("derivation:\n%s", strings.Join(tn.Status.Namespaces[0].Derivation, "\n"))
			}
		})
	}
}
