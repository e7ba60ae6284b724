package tenancy

import (
	"context"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"opctl.dev/opctl/pkg/tenancy/internal/helmrelease"
)

// rolloutStatusInterval and rolloutStatusMaxInterval bound the
// reconciles the status of a tenant's Deployments brings (coalescer): one
// at once, the next at most rolloutStatusInterval later, which a normal
// rollout's end is reported within; under changes that do not stop (an
// owner deleting pods) the interval doubles up to the max.
const (
	rolloutStatusInterval    = 5 * time.Second
	rolloutStatusMaxInterval = time.Minute
)

// rolloutStatus enqueues the Tenant of a Deployment in its namespaces
// for the changes the controller acts on or reports, and bounds those
// the owners can bring about. An owner cannot write a release's
// Deployment (guardrail tenant-managed-objects), but it can delete or
// starve its pods as often as it likes, and each time the deployment
// controller writes the Deployment's status: were every write to pass,
// the owner would keep the controller busy reconciling the Tenant
// (red team 3). So:
//   - a create, delete or change of the metadata the controller acts on
//     (generation, which a change of the spec moves, and the labels the
//     cache keeps) passes at once: only Helm, the controller or a cluster
//     admin make them;
//   - a change of the rollout's state (rolloutState) passes bounded;
//   - any other change of the status passes not at all;
//   - a write the cache does not show (an annotation, the pod template
//     of a Deployment whose generation did not move), which drift
//     correction reads live, passes bounded.
type rolloutStatus struct {
	enqueue handler.EventHandler
	mapper  handler.MapFunc
	limit   *coalescer
}

func newRolloutStatus(mapper handler.MapFunc, interval, max time.Duration) *rolloutStatus {
	return &rolloutStatus{enqueue: handler.EnqueueRequestsFromMapFunc(mapper), mapper: mapper, limit: newCoalescer(interval, max)}
}

// handler is the Deployment watch's event handler.
func (s *rolloutStatus) handler() handler.EventHandler {
	return handler.Funcs{
		CreateFunc:  s.enqueue.Create,
		DeleteFunc:  s.enqueue.Delete,
		GenericFunc: s.enqueue.Generic,
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			old, ok := e.ObjectOld.(*appsv1.Deployment)
			dep, ok2 := e.ObjectNew.(*appsv1.Deployment)
			if !ok || !ok2 {
				s.enqueue.Update(ctx, e, q)
				return
			}
			switch deploymentUpdate(old, dep) {
			case updateNow:
				s.enqueue.Update(ctx, e, q)
			case updateBounded:
				for _, req := range s.mapper(ctx, dep) {
					if wait := s.limit.wait(req.Name); wait > 0 {
						q.AddAfter(req, wait)
					} else {
						q.Add(req)
					}
				}
			}
		},
	}
}

// deploymentUpdateKind is what an update of a Deployment brings.
type deploymentUpdateKind int

const (
	updateNone deploymentUpdateKind = iota
	updateNow
	updateBounded
)

// deploymentUpdate classifies an update of a (cached, slimmed:
// slimDeployment) Deployment.
func deploymentUpdate(old, dep *appsv1.Deployment) deploymentUpdateKind {
	switch {
	case old.ResourceVersion == dep.ResourceVersion:
		return updateNone // a resync
	case metaChanged(old, dep) || !equalReplicas(old.Spec.Replicas, dep.Spec.Replicas):
		return updateNow
	case rolloutState(old) != rolloutState(dep):
		return updateBounded
	case statusEqual(old, dep):
		return updateBounded // a write the cache does not show
	}
	return updateNone
}

// rolloutStateOf is what the controller acts on or reports of a
// Deployment's status: whether the deployment controller has seen its
// generation, whether it rolled out (helmrelease.RolledOut, which the
// release's health is), whether its ready and available replicas reach
// the desired count, and its ReplicaFailure condition's status and
// reason, which the release's status quotes. The cache keeps no other
// condition (slimDeployment): Available and Progressing follow from the
// counts read here.
type rolloutStateOf struct {
	observed, rolledOut, ready, available bool
	failure, failureReason                string
}

func rolloutState(d *appsv1.Deployment) rolloutStateOf {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := rolloutStateOf{
		observed:  d.Status.ObservedGeneration >= d.Generation,
		rolledOut: helmrelease.RolledOut(d),
		ready:     d.Status.ReadyReplicas >= want,
		available: d.Status.AvailableReplicas >= want,
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure {
			st.failure, st.failureReason = string(c.Status), c.Reason
		}
	}
	if st.failure == "" {
		st.failure = string(corev1.ConditionFalse)
	}
	return st
}

func equalReplicas(a, b *int32) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// statusEqual reports whether the cached status of old and dep is the
// same.
func statusEqual(old, dep *appsv1.Deployment) bool {
	return equality.Semantic.DeepEqual(old.Status, dep.Status)
}

// coalescer bounds the reconciles a stream of changes brings per key
// (a tenant): the first at once; a later one within the key's interval of
// the last granted waits for the end of that interval, where one
// reconcile covers every change until then (the work queue keeps the
// earliest of a request's delays), and the interval doubles, up to max;
// a key quiet for a whole interval starts over at base. So a normal
// rollout is reported at most base late, and a key that keeps changing
// gets reconciles at 0, base, 3 base, 7 base, ... and then one per max:
// about log2(max/base) + d/max over any span d, however fast it changes.
type coalescer struct {
	base, max time.Duration
	now       func() time.Time

	mu sync.Mutex
	// keys are, by key, the last reconcile granted and the interval after
	// it.
	keys map[string]coalesced
	// kept is len(keys) after the last sweep.
	kept int
}

type coalesced struct {
	at       time.Time // the last reconcile granted, perhaps still to come
	interval time.Duration
}

func newCoalescer(base, max time.Duration) *coalescer {
	return &coalescer{base: base, max: max, now: time.Now, keys: map[string]coalesced{}}
}

// wait is how long the reconcile of key a change brings waits.
func (c *coalescer) wait(key string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	k, ok := c.keys[key]
	switch {
	case ok && now.Before(k.at):
		return k.at.Sub(now) // the one to come covers it
	case ok && now.Before(k.at.Add(k.interval)):
		next := k.at.Add(k.interval)
		c.keys[key] = coalesced{at: next, interval: min(2*k.interval, c.max)}
		return next.Sub(now)
	}
	c.keys[key] = coalesced{at: now, interval: c.base}
	// Forget the keys quiet for their interval (deleted tenants' too),
	// amortised over the growth of the map.
	if len(c.keys) > 2*c.kept+64 {
		for key, k := range c.keys {
			if !now.Before(k.at.Add(k.interval)) {
				delete(c.keys, key)
			}
		}
		c.kept = len(c.keys)
	}
	return 0
}
