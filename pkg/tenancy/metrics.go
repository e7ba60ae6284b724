package tenancy

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

var (
	tenantsDesc = prometheus.NewDesc("opctl_tenancy_tenants",
		"Tenants by condition type and status.", []string{"condition", "status"}, nil)
	quotaDesc = prometheus.NewDesc("opctl_tenancy_quota_utilisation_ratio",
		"Used over hard of each tenant namespace's quota, by resource.", []string{"tenant", "namespace", "resource"}, nil)
	cachedDesc = prometheus.NewDesc("opctl_tenancy_cached_objects",
		"Objects of the tenants in the controller's cache, by kind: a shard caches only its own tenants'.", []string{"kind"}, nil)
)

// cachedKinds are the kinds of tenant objects the cache holds by label.
var cachedKinds = map[string]func() client.ObjectList{
	"Namespace":      func() client.ObjectList { return &corev1.NamespaceList{} },
	"ResourceQuota":  func() client.ObjectList { return &corev1.ResourceQuotaList{} },
	"LimitRange":     func() client.ObjectList { return &corev1.LimitRangeList{} },
	"ServiceAccount": func() client.ObjectList { return &corev1.ServiceAccountList{} },
	"Role":           func() client.ObjectList { return &rbacv1.RoleList{} },
	"RoleBinding":    func() client.ObjectList { return &rbacv1.RoleBindingList{} },
	"NetworkPolicy":  func() client.ObjectList { return &networkingv1.NetworkPolicyList{} },
	"Deployment":     func() client.ObjectList { return &appsv1.DeploymentList{} },
}

// tenants counts the Tenants of the latest manager set up in this process.
var tenants = &tenantCollector{}

func init() { metrics.Registry.MustRegister(tenants) }

// tenantCollector counts Tenants by condition and the cached tenant
// objects by kind, and reports the quotas' utilisation, from the cache at
// scrape: it holds no series of its own, so its memory does not grow with
// the tenants, and a quota's value is as fresh as the cache.
type tenantCollector struct {
	mu     sync.Mutex
	client client.Reader
}

func (c *tenantCollector) use(r client.Reader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.client = r
}

func (c *tenantCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- tenantsDesc
	ch <- quotaDesc
	ch <- cachedDesc
}

func (c *tenantCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	r := c.client
	c.mu.Unlock()
	if r == nil {
		return
	}
	var tenants tenancyv1.TenantList
	if err := r.List(context.Background(), &tenants); err != nil {
		return
	}
	counts := map[[2]string]float64{}
	for _, t := range tenants.Items {
		for _, cond := range t.Status.Conditions {
			counts[[2]string{cond.Type, string(cond.Status)}]++
		}
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(tenantsDesc, prometheus.GaugeValue, n, k[0], k[1])
	}
	collectQuotas(r, ch)
	for kind, newList := range cachedKinds {
		l := newList()
		if err := r.List(context.Background(), l, client.UnsafeDisableDeepCopy); err == nil {
			ch <- prometheus.MustNewConstMetric(cachedDesc, prometheus.GaugeValue, float64(meta.LenList(l)), kind)
		}
	}
}

// collectQuotas reports used over hard of every tenant quota in the cache.
// The tenant is the quota's controller: only the controller's own quota
// (QuotaName, owned by a Tenant) counts, not one a tenant made.
func collectQuotas(r client.Reader, ch chan<- prometheus.Metric) {
	var quotas corev1.ResourceQuotaList
	if err := r.List(context.Background(), &quotas, client.UnsafeDisableDeepCopy); err != nil {
		return
	}
	for i := range quotas.Items {
		q := &quotas.Items[i]
		owner := metav1.GetControllerOf(q)
		if q.Name != QuotaName || owner == nil || owner.APIVersion != tenancyv1.GroupVersion.String() || owner.Kind != "Tenant" ||
			q.Labels[tenancyv1.LabelTenant] != owner.Name {
			continue
		}
		for name, h := range q.Status.Hard {
			if h.IsZero() {
				continue
			}
			u := q.Status.Used[name]
			ch <- prometheus.MustNewConstMetric(quotaDesc, prometheus.GaugeValue,
				u.AsApproximateFloat64()/h.AsApproximateFloat64(), owner.Name, q.Namespace, string(name))
		}
	}
}
