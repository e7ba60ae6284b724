package controller

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"

	v1alpha1 "opctl.dev/opctl/operators/memcached/api/v1alpha1"
)

// MemcachedHandler is the part of the Memcached reconcile that is not a
// resource: the check of the custom resource and its own status. Its
// resources are listed in zz_generated.memcached.go (opctl kit create
// resource adds one).
type MemcachedHandler struct {
	Client client.Client
}

// Check validates the Memcached before anything is applied. Return
// operatorkit.Terminal for a spec that cannot work.
func (h *MemcachedHandler) Check(ctx context.Context, obj *v1alpha1.Memcached) error {
	// Put your code here.
	return nil
}

// Status fills obj's own status fields after the apply. The Registry
// reports the Memcached not Ready while one of its resources is not.
func (h *MemcachedHandler) Status(ctx context.Context, obj *v1alpha1.Memcached, applied []operatorkit.ApplyResult) (operatorkit.Observation, error) {
	// Put your code here.
	return operatorkit.Observation{Ready: true, Available: true}, nil
}
