package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// MemcachedSpec is the desired state of a Memcached. Add the fields users
// set here, with their markers; then run make generate.
type MemcachedSpec struct {
	// Replicas is the number of memcached servers.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Image of the memcached server.
	// +kubebuilder:default="memcached:1.6"
	// +optional
	Image string `json:"image,omitempty"`
	// MemoryMB is the memory for items of each server (memcached -m), and
	// its container's memory request.
	// +kubebuilder:default=64
	// +kubebuilder:validation:Minimum=16
	// +optional
	MemoryMB int32 `json:"memoryMB,omitempty"`
	// DeletionPolicy says whether deleting the Memcached deletes the
	// managed objects (Delete) or leaves them running (Orphan).
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy kitapi.DeletionPolicy `json:"deletionPolicy,omitempty"`
	// Lifecycle is the lifecycle phase wished for: Running (the default),
	// Servicing (a service operation) or Stopping (stop for good). The API
	// server refuses a change the lifecycle graph forbids.
	// +optional
	Lifecycle MemcachedLifecycle `json:"lifecycle,omitempty"`
	// AdoptExisting allows taking over objects that already exist with the
	// expected names and no controller.
	// +optional
	AdoptExisting bool `json:"adoptExisting,omitempty"`
}

// MemcachedStatus is the observed state of a Memcached.
type MemcachedStatus struct {
	kitapi.Status `json:",inline"`
	// ReadyReplicas is the number of servers ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Version is what the servers answer to the version command.
	// +optional
	Version string `json:"version,omitempty"`
}

// Memcached is the Schema for the memcacheds API.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec MemcachedSpec `json:"spec,omitempty"`
	// Status is the observed state.
	// +optional
	Status MemcachedStatus `json:"status,omitempty"`
}

// MemcachedList is a list of Memcacheds.
// +kubebuilder:object:root=true
type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Memcacheds.
	Items []Memcached `json:"items"`
}
