package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"opctl.dev/opctl/pkg/operatorkit/resources"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "opctl.dev/opctl/operators/memcached/api/v1alpha1"
)

// MemcachedClient is the Service client of a Memcached, named
// <memcached>-client.
type MemcachedClient struct {
	Client client.Client
}

// New returns the empty Service of owner, named.
func (r *MemcachedClient) New(owner *v1alpha1.Memcached) client.Object {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: owner.Name + "-client"}}
}

// HashFields lists the fields whose change writes the Service, as dotted
// paths such as "spec"; nil means every field.
func (r *MemcachedClient) HashFields() []string {
	// Put your code here.
	return nil
}

// InitialData fills the Service at creation: defaults, and data that must
// never change afterwards. Once it exists, the live values of the fields
// set here are kept.
func (r *MemcachedClient) InitialData(ctx context.Context, owner *v1alpha1.Memcached, obj client.Object) error {
	o := obj.(*corev1.Service)
	o.Labels = memcachedLabels(owner, "client")
	o.Spec.Selector = memcachedLabels(owner, "")
	o.Spec.Ports = []corev1.ServicePort{{Name: "memcached", Port: port, Protocol: corev1.ProtocolTCP}}
	return nil
}

// FromCR copies the fields that come from the Memcached into the Service.
func (r *MemcachedClient) FromCR(context.Context, *v1alpha1.Memcached, client.Object) error {
	return nil
}

// Ready reports whether the live Service serves, and if not, what it
// waits for.
func (r *MemcachedClient) Ready(live client.Object) (bool, string) {
	return resources.ServiceReady(live)
}
