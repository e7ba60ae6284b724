package tenancy

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// quotaUsage keeps status.namespaces[].used of a Tenant near its quotas'
// usage, which quotaChanged does not pass: every object an owner creates
// or deletes moves it. A change of usage alone brings a reconcile of the
// Tenant at once when none came from usage in the last interval, and
// otherwise one at the end of that interval for every change during it
// (the work queue keeps the earliest of a request's delays). So usage
// brings at most two reconciles per interval and tenant however fast it
// moves, and the status lags the quota by at most the interval; every
// reconcile, whatever brought it, copies the usage of the moment.
type quotaUsage struct {
	reader   client.Reader // the cache, for the Tenants' status
	interval time.Duration
	now      func() time.Time

	mu sync.Mutex
	// next is, by tenant, when a change of usage may next bring a
	// reconcile at once; past times mean now.
	next map[string]time.Time
	// kept is len(next) after the last sweep of past times.
	kept int
}

func newQuotaUsage(reader client.Reader, interval time.Duration) *quotaUsage {
	return &quotaUsage{reader: reader, interval: interval, now: time.Now, next: map[string]time.Time{}}
}

// handler enqueues the Tenant of a quota whose usage alone changed, when
// its status shows another usage.
func (u *quotaUsage) handler() handler.EventHandler {
	return handler.Funcs{UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		old, ok := e.ObjectOld.(*corev1.ResourceQuota)
		quota, ok2 := e.ObjectNew.(*corev1.ResourceQuota)
		if !ok || !ok2 || quotaChanged.Update(e) || equality.Semantic.DeepEqual(old.Status.Used, quota.Status.Used) {
			return // nothing new, or the owner watch's
		}
		tenant := quotaTenant(quota)
		if tenant == "" || u.shown(ctx, tenant, quota) {
			return
		}
		req := reconcile.Request{NamespacedName: client.ObjectKey{Name: tenant}}
		if wait := u.wait(tenant); wait > 0 {
			q.AddAfter(req, wait)
		} else {
			q.Add(req)
		}
	}}
}

// quotaTenant is the Tenant controlling q, the controller's quota, if
// any.
func quotaTenant(q *corev1.ResourceQuota) string {
	owner := metav1.GetControllerOf(q)
	if q.Name != QuotaName || owner == nil || owner.APIVersion != tenancyv1.GroupVersion.String() || owner.Kind != "Tenant" {
		return ""
	}
	return owner.Name
}

// shown reports whether the status of tenant already shows the usage of
// q.
func (u *quotaUsage) shown(ctx context.Context, tenant string, q *corev1.ResourceQuota) bool {
	t := &tenancyv1.Tenant{}
	if err := u.reader.Get(ctx, client.ObjectKey{Name: tenant}, t); err != nil {
		return false
	}
	for _, st := range t.Status.Namespaces {
		if st.Name == q.Namespace {
			return equality.Semantic.DeepEqual(st.Used, q.Status.Used)
		}
	}
	return false
}

// wait is how long a reconcile of tenant for a change of usage waits:
// none, opening an interval, when no interval of tenant is open, and
// otherwise until the open one ends.
func (u *quotaUsage) wait(tenant string) time.Duration {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	if next, ok := u.next[tenant]; ok && now.Before(next) {
		return next.Sub(now)
	}
	u.next[tenant] = now.Add(u.interval)
	// Forget the intervals that have ended (of deleted tenants too),
	// amortised over the growth of the map.
	if len(u.next) > 2*u.kept+64 {
		for k, next := range u.next {
			if !now.Before(next) {
				delete(u.next, k)
			}
		}
		u.kept = len(u.next)
	}
	return 0
}
