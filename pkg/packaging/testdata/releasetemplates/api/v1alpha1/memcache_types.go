package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MemcacheSpec defines the desired state of Memcache.
type MemcacheSpec struct {
	// Size is the number of memcached pods.
	// +kubebuilder:validation:Minimum=1
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pod count",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:podCount"}
	Size int32 `json:"size,omitempty"`

	// Memory is the cache size of each pod, in megabytes.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,xDescriptors="urn:alm:descriptor:com.tectonic.ui:number"
	Memory int32 `json:"memory,omitempty"`

	Tuning `json:",inline"`

	// Exporter configures the metrics sidecar.
	Exporter *ExporterSpec `json:"exporter,omitempty"`
}

// Tuning holds the settings inlined into the spec.
type Tuning struct {
	// Threads per pod.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Worker threads"
	Threads int32 `json:"threads,omitempty"`
}

// ExporterSpec configures the exporter.
type ExporterSpec struct {
	// Enabled runs the exporter sidecar.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Metrics exporter",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch","urn:alm:descriptor:com.tectonic.ui:advanced"}
	Enabled bool `json:"enabled,omitempty"`
}

// MemcacheStatus defines the observed state of Memcache.
type MemcacheStatus struct {
	// Conditions of the Memcache.
	// +operator-sdk:csv:customresourcedefinitions:type=status,xDescriptors="urn:alm:descriptor:io.kubernetes.conditions"
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
	// Nodes are the pod names.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Pods"
	Nodes []string `json:"nodes,omitempty"`
}

// Memcache runs a memcached cluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +operator-sdk:csv:customresourcedefinitions:displayName="Memcache Cluster",resources={{Deployment,v1,memcache-deployment},{Service,v1,""}}
type Memcache struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MemcacheSpec   `json:"spec,omitempty"`
	Status MemcacheStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// MemcacheList contains a list of Memcache.
type MemcacheList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Memcache `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Memcache{}, &MemcacheList{})
}
