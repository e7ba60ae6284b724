package controller

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
	"opctl.dev/opctl/pkg/operatorkit/resources"

	v1alpha1 "opctl.dev/opctl/operators/memcached/api/v1alpha1"
)

// MemcachedHandler is the part of the Memcached reconcile that is not a
// resource: the check of the custom resource and its own status. Its
// resources are listed in zz_generated.memcached.go (opctl kit create
// resource adds one).
type MemcachedHandler struct {
	Client client.Client
	// Address of a Memcached's servers for the version command; default
	// its client Service.
	Address func(*v1alpha1.Memcached) string
}

// Check validates the Memcached before anything is applied. Return
// operatorkit.Terminal for a spec that cannot work.
func (h *MemcachedHandler) Check(context.Context, *v1alpha1.Memcached) error {
	return nil
}

// Status fills obj's own status fields after the apply. The Registry
// reports the Memcached not Ready while one of its resources is not.
func (h *MemcachedHandler) Status(ctx context.Context, obj *v1alpha1.Memcached, _ []operatorkit.ApplyResult) (operatorkit.Observation, error) {
	d := &appsv1.Deployment{}
	if err := h.Client.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: obj.Name + "-server"}, d); err != nil {
		return operatorkit.Observation{Progressing: true, Message: "waiting for the Deployment"}, client.IgnoreNotFound(err)
	}
	r := resources.Deployment(d)
	obj.Status.ReadyReplicas = r.Ready
	if obj.KitWish() == lifecycle.Stopping {
		stopped := r.Observed && d.Status.Replicas == 0
		return operatorkit.Observation{Ready: stopped, Progressing: !stopped, Stopped: stopped, Message: "stopping the servers, as wished"}, nil
	}
	o := operatorkit.Observation{Ready: r.RolledOut(), Available: r.AnyAvailable() || r.RolledOut(), Progressing: !r.RolledOut()}
	if !o.Available {
		return o, nil
	}
	addr := fmt.Sprintf("%s-client.%s.svc:%d", obj.Name, obj.Namespace, port)
	if h.Address != nil {
		addr = h.Address(obj)
	}
	v, err := Version(ctx, addr)
	if err != nil {
		o.Ready, o.Reason, o.Message = false, "ServerUnreachable", err.Error()
		o.RequeueAfter = 10 * time.Second
		return o, nil
	}
	obj.Status.Version = v
	return o, nil
}
