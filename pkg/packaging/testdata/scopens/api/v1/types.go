package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GadgetSpec is the desired state.
type GadgetSpec struct {
	// Size is the number of replicas.
	Size int32 `json:"size,omitempty"`
}

// GadgetStatus is the observed state.
type GadgetStatus struct {
	// Ready says the Gadget is ready.
	Ready bool `json:"ready,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// Gadget is the fixture's custom resource.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GadgetSpec   `json:"spec,omitempty"`
	Status GadgetStatus `json:"status,omitempty"`
}
