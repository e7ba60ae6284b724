package controller

import (
	"context"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
	"opctl.dev/opctl/pkg/operatorkit/resources"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "opctl.dev/opctl/operators/memcached/api/v1alpha1"
)

// MemcachedServer is the Deployment server of a Memcached, named
// <memcached>-server.
type MemcachedServer struct {
	Client client.Client
}

// port is memcached's.
const port = 11211

// New returns the empty Deployment of owner, named.
func (r *MemcachedServer) New(owner *v1alpha1.Memcached) client.Object {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: owner.Name + "-server"}}
}

// HashFields lists the fields whose change writes the Deployment, as dotted
// paths such as "spec"; nil means every field.
func (r *MemcachedServer) HashFields() []string {
	// Put your code here.
	return nil
}

// InitialData fills the Deployment at creation: defaults, and data that must
// never change afterwards. Once it exists, the live values of the fields
// set here are kept.
func (r *MemcachedServer) InitialData(ctx context.Context, owner *v1alpha1.Memcached, obj client.Object) error {
	o := obj.(*appsv1.Deployment)
	o.Labels = memcachedLabels(owner, "server")
	o.Spec.Selector = &metav1.LabelSelector{MatchLabels: memcachedLabels(owner, "server")}
	o.Spec.Template.Labels = memcachedLabels(owner, "server")
	o.Spec.Template.Spec.SecurityContext = &corev1.PodSecurityContext{
		RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](11211), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	o.Spec.Template.Spec.Containers = []corev1.Container{{
		Name:  "memcached",
		Ports: []corev1.ContainerPort{{Name: "memcached", ContainerPort: port, Protocol: corev1.ProtocolTCP}},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}}
	return nil
}

// FromCR copies the fields that come from the Memcached into the Deployment.
func (r *MemcachedServer) FromCR(ctx context.Context, owner *v1alpha1.Memcached, obj client.Object) error {
	o := obj.(*appsv1.Deployment)
	o.Spec.Replicas = &owner.Spec.Replicas
	if owner.Spec.Lifecycle == v1alpha1.MemcachedLifecycle(lifecycle.Stopping) {
		o.Spec.Replicas = ptr.To[int32](0)
	}
	c := &o.Spec.Template.Spec.Containers[0]
	c.Image = owner.Spec.Image
	c.Args = []string{"-m", strconv.Itoa(int(owner.Spec.MemoryMB)), "-p", strconv.Itoa(port)}
	c.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(int64(owner.Spec.MemoryMB)<<20, resource.BinarySI)}
	return nil
}

// Ready reports whether the live Deployment serves, and if not, what it
// waits for.
func (r *MemcachedServer) Ready(live client.Object) (bool, string) {
	return resources.DeploymentReady(live)
}
