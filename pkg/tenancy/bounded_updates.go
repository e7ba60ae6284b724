package tenancy

import (
	"context"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// boundedUpdates is a watch's event handler that enqueues the Tenant of a
// created, deleted or generic object at once, and of an updated one (which
// the watch's predicate passed) coalesced per Tenant by limit: an object
// whose status a tenant can drive, through OLM, for one (a CSV's phase
// follows the Deployment OLM runs in the tenant's namespace, which its
// owners may edit or delete), brings a bounded number of reconciles
// however fast it changes (red team 4: 28 edits in 30 s were 137).
func boundedUpdates(mapper handler.MapFunc, limit *coalescer) handler.EventHandler {
	enqueue := handler.EnqueueRequestsFromMapFunc(mapper)
	return handler.Funcs{
		CreateFunc:  enqueue.Create,
		DeleteFunc:  enqueue.Delete,
		GenericFunc: enqueue.Generic,
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			for _, req := range mapper(ctx, e.ObjectNew) {
				if wait := limit.wait(req.Name); wait > 0 {
					q.AddAfter(req, wait)
				} else {
					q.Add(req)
				}
			}
		},
	}
}
