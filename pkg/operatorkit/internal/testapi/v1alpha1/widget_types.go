package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// WidgetSpec is what a Widget asks for.
type WidgetSpec struct {
	// Message is written into the managed ConfigMap.
	// +optional
	Message string `json:"message,omitempty"`
	// Replicas of the managed Deployment.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Image of the managed Deployment.
	// +kubebuilder:default="registry.example/widget:v1"
	// +optional
	Image string `json:"image,omitempty"`
	// ExtraConfigMaps is how many additional ConfigMaps to manage.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ExtraConfigMaps int32 `json:"extraConfigMaps,omitempty"`
	// DeletionPolicy says whether deleting the Widget deletes or orphans
	// the managed objects.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy kitapi.DeletionPolicy `json:"deletionPolicy,omitempty"`
	// AdoptExisting allows taking over objects that already exist.
	// +optional
	AdoptExisting bool `json:"adoptExisting,omitempty"`
	// RequestPhase asks for a specific lifecycle transition.
	// +optional
	RequestPhase string `json:"requestPhase,omitempty"`
	// Invalid makes the check step fail with a terminal error.
	// +optional
	Invalid bool `json:"invalid,omitempty"`
	// FailTimes makes the check step fail transiently this many times.
	// +optional
	FailTimes int32 `json:"failTimes,omitempty"`
}

// WidgetStatus is what the reconciler observed.
type WidgetStatus struct {
	kitapi.Status `json:",inline"`
	// ReadyReplicas of the managed Deployment.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
}

// Widget is the test kind of operatorkit.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec WidgetSpec `json:"spec,omitempty"`
	// Status is the observed state.
	// +optional
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetList is a list of Widgets.
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Widgets.
	Items []Widget `json:"items"`
}

// KitStatus implements operatorkit.Object.
func (w *Widget) KitStatus() *kitapi.Status { return &w.Status.Status }

// KitDeletionPolicy implements operatorkit.Object.
func (w *Widget) KitDeletionPolicy() kitapi.DeletionPolicy { return w.Spec.DeletionPolicy }

// KitAdoptionAllowed implements operatorkit.Object.
func (w *Widget) KitAdoptionAllowed() bool { return w.Spec.AdoptExisting }
