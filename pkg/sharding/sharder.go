package sharding

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// errStale is a change refused because the sharder's cache was behind.
var errStale = errors.New("stale")

// resync bounds the time between two passes of the Sharder when nothing
// happens.
const resync = 30 * time.Second

// Sharder assigns objects to the live shards of a ring. It runs only in
// the replica that holds the sharder Lease (the manager's leader
// election), with a cache of its own: the metadata of the objects of the
// kind (those of the selector), and the ring's shard Leases.
type Sharder struct {
	ring, namespace string
	gvk             schema.GroupVersionKind
	selector        labels.Selector
	config          *rest.Config
	httpClient      *http.Client
	mapper          meta.RESTMapper
	client          client.Client
}

func (s *Sharder) NeedLeaderElection() bool { return true }

// Start runs passes of Plan, after any change of an object's labels or of
// the membership, and when the first live Lease expires.
func (s *Sharder) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("sharder").WithValues("ring", s.ring)
	scheme := runtime.NewScheme()
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := cache.New(s.config, cache.Options{Scheme: scheme, HTTPClient: s.httpClient, Mapper: s.mapper,
		DefaultTransform: cache.TransformStripManagedFields(), DefaultLabelSelector: s.selector,
		ByObject: map[client.Object]cache.ByObject{&coordinationv1.Lease{}: {
			Namespaces: map[string]cache.Config{s.namespace: {}}, Label: labels.SelectorFromSet(labels.Set{LabelRing: s.ring})}}})
	if err != nil {
		return fmt.Errorf("sharder cache: %w", err)
	}
	trigger := make(chan struct{}, 1)
	poke := func() {
		select {
		case trigger <- struct{}{}:
		default:
		}
	}
	objects := &metav1.PartialObjectMetadata{}
	objects.SetGroupVersionKind(s.gvk)
	for _, o := range []client.Object{&coordinationv1.Lease{}, objects} {
		inf, err := c.GetInformer(ctx, o)
		if err != nil {
			return fmt.Errorf("sharder informer: %w", err)
		}
		if _, err := inf.AddEventHandler(changes(poke)); err != nil {
			return err
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return ctx.Err()
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-trigger:
		case <-timer.C:
		}
		wake, err := s.pass(ctx, c)
		if err != nil {
			logger.Error(err, "sharding pass")
			wake = time.Now().Add(time.Second)
		}
		timer.Reset(time.Until(wake))
	}
}

// pass applies one Plan and returns when the next is due at the latest.
func (s *Sharder) pass(ctx context.Context, c cache.Cache) (time.Time, error) {
	var leases coordinationv1.LeaseList
	if err := c.List(ctx, &leases); err != nil {
		return time.Time{}, err
	}
	now := time.Now()
	live, expires := Members(leases.Items, now)
	liveShards.WithLabelValues(s.ring).Set(float64(len(live)))
	wake := now.Add(resync)
	if !expires.IsZero() && expires.Before(wake) {
		wake = expires.Add(100 * time.Millisecond)
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(s.gvk.GroupVersion().WithKind(s.gvk.Kind + "List"))
	if err := c.List(ctx, list); err != nil {
		return time.Time{}, err
	}
	objs := make([]Object, len(list.Items))
	byName := make(map[string]*metav1.PartialObjectMetadata, len(list.Items))
	for i := range list.Items {
		o := &list.Items[i]
		objs[i] = Object{Name: o.Name, Shard: o.Labels[ShardLabel(s.ring)], Draining: o.Labels[DrainLabel(s.ring)] != ""}
		byName[o.Name] = o
	}
	// Eight writes at a time, each with the resourceVersion the plan read
	// as a precondition. A write refused because the cache was behind is
	// planned again a second later.
	var (
		g     errgroup.Group
		stale atomic.Bool
	)
	g.SetLimit(8)
	for _, ch := range Plan(objs, NewRing(live), live) {
		g.Go(func() error {
			err := s.write(ctx, ch, byName[ch.Name])
			if errors.Is(err, errStale) {
				stale.Store(true)
				return nil
			}
			return err
		})
	}
	err := g.Wait()
	if stale.Load() {
		wake = time.Now().Add(time.Second)
	}
	return wake, err
}

func (s *Sharder) write(ctx context.Context, ch Change, o *metav1.PartialObjectMetadata) error {
	labels := map[string]*string{DrainLabel(s.ring): nil, ShardLabel(s.ring): &ch.To}
	if ch.Drain {
		yes := "true"
		labels = map[string]*string{DrainLabel(s.ring): &yes}
	}
	patch, err := labelPatch(o.ResourceVersion, labels)
	if err != nil {
		return err
	}
	obj := o.DeepCopy()
	err = s.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		// Changed since the cache saw it: the next pass reads it again.
		return errStale
	case err != nil:
		return fmt.Errorf("sharding %s: %w", o.Name, err)
	}
	if ch.Drain {
		drains.WithLabelValues(s.ring).Inc()
	} else {
		assignments.WithLabelValues(s.ring).Inc()
	}
	return nil
}

// changes pokes on every add and delete, and on an update that changes
// labels or a Lease's holder: not on a Lease's renewal.
func changes(poke func()) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		DeleteFunc: func(any) { poke() },
		UpdateFunc: func(oldObj, newObj any) {
			if ol, ok := oldObj.(*coordinationv1.Lease); ok {
				nl := newObj.(*coordinationv1.Lease)
				if ptr.Deref(ol.Spec.HolderIdentity, "") != ptr.Deref(nl.Spec.HolderIdentity, "") {
					poke()
				}
				return
			}
			oo, ok1 := oldObj.(client.Object)
			no, ok2 := newObj.(client.Object)
			if !ok1 || !ok2 || !maps.Equal(oo.GetLabels(), no.GetLabels()) {
				poke()
			}
		},
	}
}
