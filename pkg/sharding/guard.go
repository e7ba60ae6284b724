package sharding

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Guard runs a shard's reconciles: it lets go of a draining object, and
// passes on only the objects whose shard label names this shard. The
// cache of a shard already selects them; the Guard is what makes a stale
// cache or a queued request harmless.
type Guard struct {
	ring, id  string
	client    client.Client
	newObject func() client.Object
	// trace, when set, is told of every reconcile the shard ran.
	trace    func(name string, start, end time.Time)
	inflight atomic.Int64
}

// Wrap returns r behind the Guard.
func (g *Guard) Wrap(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		g.inflight.Add(1)
		defer g.inflight.Add(-1)
		obj := g.newObject()
		if err := g.client.Get(ctx, req.NamespacedName, obj); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		labels := obj.GetLabels()
		if labels[ShardLabel(g.ring)] != g.id {
			return reconcile.Result{}, nil
		}
		if labels[DrainLabel(g.ring)] != "" {
			return reconcile.Result{}, g.release(ctx, obj)
		}
		start := time.Now()
		res, err := r.Reconcile(ctx, req)
		if g.trace != nil {
			g.trace(req.Name, start, time.Now())
		}
		return res, err
	})
}

// release removes the shard and drain labels: the acknowledgement the
// sharder waits for before it assigns the object to its new shard. It
// runs in the object's own reconcile queue, so no reconcile of it is
// running in this shard, and the resourceVersion precondition makes it
// fail if the object changed since the cache saw the drain.
func (g *Guard) release(ctx context.Context, obj client.Object) error {
	patch, err := labelPatch(obj.GetResourceVersion(), map[string]*string{ShardLabel(g.ring): nil, DrainLabel(g.ring): nil})
	if err != nil {
		return err
	}
	if err := g.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("releasing %s from shard %s: %w", obj.GetName(), g.id, err)
	}
	releases.WithLabelValues(g.ring).Inc()
	return nil
}

// wait blocks until no reconcile runs, or for at most limit.
func (g *Guard) wait(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for g.inflight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
}

// labelPatch is a JSON merge patch of labels (nil removes one), with a
// resourceVersion precondition when rv is set.
func labelPatch(rv string, labels map[string]*string) ([]byte, error) {
	meta := map[string]any{"labels": labels}
	if rv != "" {
		meta["resourceVersion"] = rv
	}
	return json.Marshal(map[string]any{"metadata": meta})
}
