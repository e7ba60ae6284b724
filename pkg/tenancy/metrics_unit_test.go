package tenancy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// TestQuotaUtilisation: the collector reports the controller's quotas from
// the cache, and only those: not a quota of another name, nor one whose
// tenant label and controller disagree, nor one with no controller.
func TestQuotaUtilisation(t *testing.T) {
	quota := func(ns, name, label, owner string) *corev1.ResourceQuota {
		q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{tenancyv1.LabelTenant: label}},
			Status: corev1.ResourceQuotaStatus{
				Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10"), corev1.ResourceRequestsMemory: resource.MustParse("1Gi"),
					corev1.ResourceRequestsCPU: resource.MustParse("0")},
				Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("4"), corev1.ResourceRequestsMemory: resource.MustParse("768Mi")},
			}}
		if owner != "" {
			q.OwnerReferences = []metav1.OwnerReference{{APIVersion: tenancyv1.GroupVersion.String(), Kind: "Tenant", Name: owner,
				UID: "u-owner", Controller: ptr.To(true)}}
		}
		return q
	}
	notController := quota("d", QuotaName, "alpha", "alpha")
	notController.OwnerReferences[0].Controller = nil
	objs := []client.Object{
		quota("a", QuotaName, "alpha", "alpha"),
		quota("a", "extra", "alpha", "alpha"),
		quota("b", QuotaName, "beta", "alpha"),
		quota("c", QuotaName, "alpha", ""),
		notController,
	}
	c := &tenantCollector{}
	c.use(fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(objs...).Build())
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range families {
		if f.GetName() != "opctl_tenancy_quota_utilisation_ratio" {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			got = append(got, fmt.Sprintf("%s %g", strings.Join(labels, ","), m.GetGauge().GetValue()))
		}
	}
	want := []string{
		"namespace=a,resource=pods,tenant=alpha 0.4",
		"namespace=a,resource=requests.memory,tenant=alpha 0.75",
	}
	if !slices.Equal(got, want) {
		t.Errorf("quota series:\n got %q\nwant %q", got, want)
	}
}
