package tenancy

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// tenantQuota is the quota of tenant t in namespace ns, with used pods.
func tenantQuota(t, ns, pods string) *corev1.ResourceQuota {
	hard := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: QuotaName, Namespace: ns, ResourceVersion: "1", Labels: map[string]string{tenancyv1.LabelTenant: t},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: tenancyv1.GroupVersion.String(), Kind: "Tenant", Name: t, Controller: ptr.To(true)}}},
		Spec:   corev1.ResourceQuotaSpec{Hard: hard},
		Status: corev1.ResourceQuotaStatus{Hard: hard.DeepCopy(), Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse(pods)}},
	}
}

// TestPredicates: each watch passes the changes the controller acts on
// and no other.
func TestPredicates(t *testing.T) {
	quota := tenantQuota("a", "a", "1")
	uncounted := tenantQuota("a", "a", "1")
	for _, q := range []corev1.ResourceList{uncounted.Spec.Hard, uncounted.Status.Hard} {
		q["count/kvstores.kv.opctl.dev"] = resource.MustParse("3")
	}
	helmRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "r", ResourceVersion: "1", Labels: map[string]string{guard.HelmManagedBy: "Helm"}}}
	ownSA := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa", ResourceVersion: "1",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: tenancyv1.GroupVersion.String(), Kind: "Tenant", Name: "a", Controller: ptr.To(true)}}}}
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", ResourceVersion: "1"},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}}, Ports: []discoveryv1.EndpointPort{{Port: ptr.To[int32](443)}}}
	for _, tc := range []struct {
		name   string
		p      predicate.Predicate
		old    client.Object
		change func(client.Object) // nil: a resync
		want   bool
	}{
		{"quota usage", quotaChanged, quota, func(o client.Object) {
			o.(*corev1.ResourceQuota).Status.Used[corev1.ResourcePods] = resource.MustParse("2")
		}, false},
		{"quota spec", quotaChanged, quota, func(o client.Object) {
			o.(*corev1.ResourceQuota).Spec.Hard[corev1.ResourcePods] = resource.MustParse("5")
		}, true},
		{"quota counted", quotaChanged, quota, func(o client.Object) {
			o.(*corev1.ResourceQuota).Status.Hard[corev1.ResourcePods] = resource.MustParse("5")
		}, true},
		{"quota counting a new kind", quotaChanged, uncounted, func(o client.Object) {
			o.(*corev1.ResourceQuota).Status.Used["count/kvstores.kv.opctl.dev"] = resource.MustParse("0")
		}, true},
		{"quota labels", quotaChanged, quota, func(o client.Object) { o.SetLabels(nil) }, true},
		{"quota owners", quotaChanged, quota, func(o client.Object) { o.SetOwnerReferences(nil) }, true},
		{"quota deletion", quotaChanged, quota, func(o client.Object) { o.SetDeletionTimestamp(&metav1.Time{Time: time.Now()}) }, true},
		{"quota resync", quotaChanged, quota, nil, false},
		{"a release Role's slimmed rules", roleChanged, helmRole, func(client.Object) {}, true},
		{"the controller's ServiceAccount's secrets", serviceAccountChanged, ownSA, func(o client.Object) {
			o.(*corev1.ServiceAccount).Secrets = []corev1.ObjectReference{{Name: "token"}}
		}, false},
		{"the controller's ServiceAccount's pull secrets", serviceAccountChanged, ownSA, func(o client.Object) {
			o.(*corev1.ServiceAccount).ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
		}, true},
		{"the API server's endpoint conditions", apiServerSliceChanged, slice, func(o client.Object) {
			o.(*discoveryv1.EndpointSlice).Endpoints[0].Conditions.Ready = ptr.To(false)
		}, false},
		{"the API server's addresses", apiServerSliceChanged, slice, func(o client.Object) {
			o.(*discoveryv1.EndpointSlice).Endpoints[0].Addresses = []string{"10.0.0.2"}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			updated := tc.old.DeepCopyObject().(client.Object)
			if tc.change != nil { // nil: a resync, the same version
				updated.SetResourceVersion("2")
				tc.change(updated)
			}
			if got := tc.p.Update(event.UpdateEvent{ObjectOld: tc.old, ObjectNew: updated}); got != tc.want {
				t.Errorf("passed %t, want %t", got, tc.want)
			}
		})
	}
}

// queued records what a handler enqueues.
type queued struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	adds []time.Duration // 0: at once
}

func (q *queued) Add(reconcile.Request) { q.adds = append(q.adds, 0) }
func (q *queued) AddAfter(_ reconcile.Request, d time.Duration) {
	q.adds = append(q.adds, d)
}

// TestQuotaUsageBounded: changes of usage alone bring a reconcile at once,
// then at most one at the end of the interval, and none when the status
// already shows the usage.
func TestQuotaUsageBounded(t *testing.T) {
	tenant := &tenancyv1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "a"},
		Status: tenancyv1.TenantStatus{Namespaces: []tenancyv1.NamespaceStatus{{Name: "a", Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}}}}}
	cl := fake.NewClientBuilder().WithScheme(Scheme()).WithObjects(tenant).WithStatusSubresource(tenant).Build()
	u := newQuotaUsage(cl, time.Minute)
	now := time.Unix(1000, 0)
	u.now = func() time.Time { return now }
	h := u.handler()
	q := &queued{}
	used := func(from, to string) {
		h.Update(context.Background(), event.UpdateEvent{ObjectOld: tenantQuota("a", "a", from), ObjectNew: tenantQuota("a", "a", to)}, q)
	}
	used("1", "2")
	now = now.Add(10 * time.Second)
	used("2", "3")
	used("3", "1") // what the status shows: nothing to do
	now = now.Add(20 * time.Second)
	used("1", "2")
	now = now.Add(time.Minute)
	used("2", "3")
	want := []time.Duration{0, 50 * time.Second, 30 * time.Second, 0}
	if len(q.adds) != len(want) {
		t.Fatalf("enqueued %v, want %v", q.adds, want)
	}
	for i := range want {
		if q.adds[i] != want[i] {
			t.Errorf("enqueued %v, want %v", q.adds, want)
		}
	}
	// A change the owner watch passes, and a quota no Tenant controls,
	// are not this handler's.
	q.adds = nil
	spec := tenantQuota("a", "a", "5")
	spec.Spec.Hard[corev1.ResourcePods] = resource.MustParse("20")
	h.Update(context.Background(), event.UpdateEvent{ObjectOld: tenantQuota("a", "a", "1"), ObjectNew: spec}, q)
	foreign := tenantQuota("a", "a", "5")
	foreign.OwnerReferences = nil
	h.Update(context.Background(), event.UpdateEvent{ObjectOld: tenantQuota("a", "a", "1"), ObjectNew: foreign}, q)
	if len(q.adds) != 0 {
		t.Errorf("enqueued %v, want nothing", q.adds)
	}
}

// releaseDeployment is a rolled-out Deployment of one replica.
func releaseDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "a", ResourceVersion: "1", Generation: 2},
		Spec:   appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}}
}

// TestRolloutStatusBounded: of a Deployment's updates, a change of its
// generation passes at once, a change of its rollout's state bounded
// (at once, then one at the end of the interval, which doubles while the
// changes go on), other status changes and resyncs not at all.
func TestRolloutStatusBounded(t *testing.T) {
	s := newRolloutStatus(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: "a"}}}
	}, 5*time.Second, time.Minute)
	now := time.Unix(1000, 0)
	s.limit.now = func() time.Time { return now }
	h := s.handler()
	q := &queued{}
	update := func(change func(*appsv1.Deployment)) {
		old, dep := releaseDeployment(), releaseDeployment()
		if change != nil {
			dep.ResourceVersion = "2"
			change(dep)
		}
		h.Update(context.Background(), event.UpdateEvent{ObjectOld: old, ObjectNew: dep}, q)
	}
	podGone := func(d *appsv1.Deployment) { d.Status.ReadyReplicas, d.Status.AvailableReplicas = 0, 0 }
	update(nil) // a resync
	update(func(d *appsv1.Deployment) { d.Status.Conditions = nil; d.Status.CollisionCount = ptr.To[int32](0) })
	if len(q.adds) != 0 {
		t.Fatalf("a resync and a change of nothing the controller reads enqueued %v", q.adds)
	}
	update(podGone) // at once
	now = now.Add(time.Second)
	update(podGone) // at the interval's end
	update(podGone) // covered by that one
	now = now.Add(5 * time.Second)
	update(podGone)            // the next interval's end, twice as long
	now = now.Add(time.Minute) // quiet for the interval: start over
	update(func(d *appsv1.Deployment) {
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate"}}
	}) // at once: no interval open
	update(func(d *appsv1.Deployment) { d.Generation = 3 }) // at once, always
	want := []time.Duration{0, 4 * time.Second, 4 * time.Second, 9 * time.Second, 0, 0}
	if len(q.adds) != len(want) {
		t.Fatalf("enqueued %v, want %v", q.adds, want)
	}
	for i := range want {
		if q.adds[i] != want[i] {
			t.Errorf("enqueued %v, want %v", q.adds, want)
		}
	}
}
