package tenancy

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// getOwned reads an object the controller labels for a tenant
// (settings.ownedLabels). A shard caches only the objects labelled with
// its own shard: a tenant that has just moved here keeps the label of the
// shard it left until this reconcile relabels its objects, so a shard
// reads a cache miss live. Unsharded, the cache is the answer.
func (c *Controller) getOwned(ctx context.Context, key client.ObjectKey, obj client.Object) error {
	err := c.client.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) && c.opts.Shard != nil {
		return c.reader.Get(ctx, key, obj)
	}
	return err
}

// listOwned lists objects the controller labels for a tenant, as getOwned
// reads one: a shard lists live when its cache has none.
func (c *Controller) listOwned(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.client.List(ctx, list, opts...); err != nil || c.opts.Shard == nil || meta.LenList(list) > 0 {
		return err
	}
	return c.reader.List(ctx, list, opts...)
}

// ownedReader reads as getOwned and listOwned do, for the release engine.
type ownedReader struct{ c *Controller }

func (r ownedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	return r.c.getOwned(ctx, key, obj)
}

func (r ownedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.c.listOwned(ctx, list, opts...)
}
