package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GizmoSpec is the desired state.
type GizmoSpec struct {
	// Size is the number of replicas.
	Size int32 `json:"size,omitempty"`
}

// GizmoStatus is the observed state.
type GizmoStatus struct {
	// Ready says the Gizmo is ready.
	Ready bool `json:"ready,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// Gizmo is the fixture's custom resource.
type Gizmo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   GizmoSpec   `json:"spec,omitempty"`
	Status GizmoStatus `json:"status,omitempty"`
}
