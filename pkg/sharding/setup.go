package sharding

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Options configure one shard of a ring.
type Options struct {
	// Ring names the ring: its label keys and the label of its Leases.
	Ring string
	// ID is this shard's name, and the name of its Lease: unique among
	// the replicas, and stable across restarts where it can be (a pod
	// name).
	ID string
	// Namespace holds the shard Leases.
	Namespace string
	// Selector, when set, limits the ring to the objects it selects (the
	// default is every object of the kind).
	Selector labels.Selector
	// Trace, when set, is told of every reconcile this shard ran (tests).
	Trace func(name string, start, end time.Time)
}

// Setup adds the shard Lease and the Sharder of o's ring to mgr, whose
// leader election Lease is the sharder Lease, and returns the Guard the
// controller of prototype's kind wraps its reconciler in. The manager's
// cache must select the kind with Selector.
func Setup(mgr manager.Manager, o Options, prototype client.Object) (*Guard, error) {
	if o.Ring == "" || o.ID == "" || o.Namespace == "" {
		return nil, fmt.Errorf("sharding needs a ring name, a shard ID and the Lease namespace (ring %q, ID %q, namespace %q)", o.Ring, o.ID, o.Namespace)
	}
	gvk, err := apiutil.GVKForObject(prototype, mgr.GetScheme())
	if err != nil {
		return nil, err
	}
	g := &Guard{ring: o.Ring, id: o.ID, client: mgr.GetClient(), trace: o.Trace,
		newObject: func() client.Object { return prototype.DeepCopyObject().(client.Object) }}
	runnables := []manager.Runnable{
		&shardLease{ring: o.Ring, id: o.ID, namespace: o.Namespace, config: mgr.GetConfig(), guard: g},
		&Sharder{ring: o.Ring, namespace: o.Namespace, gvk: gvk, selector: o.Selector, client: mgr.GetClient(),
			config: mgr.GetConfig(), httpClient: mgr.GetHTTPClient(), mapper: mgr.GetRESTMapper()},
	}
	for _, r := range runnables {
		if err := mgr.Add(r); err != nil {
			return nil, err
		}
	}
	return g, nil
}
