package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// GadgetSpec is what a Gadget asks for: its handler is assembled from
// operatorkit Resources.
type GadgetSpec struct {
	// Message is written into the managed ConfigMap.
	// +optional
	Message string `json:"message,omitempty"`
	// Replicas of the managed StatefulSet.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Image of the managed StatefulSet.
	// +kubebuilder:default="registry.example/gadget:v1"
	// +optional
	Image string `json:"image,omitempty"`
	// Backup, when set, runs a backup action with this key.
	// +optional
	Backup string `json:"backup,omitempty"`
	// DeletionPolicy says whether deleting the Gadget deletes or orphans
	// the managed objects.
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy kitapi.DeletionPolicy `json:"deletionPolicy,omitempty"`
	// AdoptExisting allows taking over objects that already exist.
	// +optional
	AdoptExisting bool `json:"adoptExisting,omitempty"`
}

// GadgetStatus is what the reconciler observed.
type GadgetStatus struct {
	kitapi.Status `json:",inline"`
	// RunningPods of the managed StatefulSet.
	// +optional
	RunningPods int32 `json:"runningPods,omitempty"`
	// Backup is the last backup action.
	// +optional
	Backup *kitapi.ActionStatus `json:"backup,omitempty"`
}

// Gadget is the test kind of operatorkit's Registry.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +optional
	Spec GadgetSpec `json:"spec,omitempty"`
	// Status is the observed state.
	// +optional
	Status GadgetStatus `json:"status,omitempty"`
}

// GadgetList is a list of Gadgets.
// +kubebuilder:object:root=true
type GadgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Gadgets.
	Items []Gadget `json:"items"`
}

// KitStatus implements operatorkit.Object.
func (g *Gadget) KitStatus() *kitapi.Status { return &g.Status.Status }

// KitDeletionPolicy implements operatorkit.Object.
func (g *Gadget) KitDeletionPolicy() kitapi.DeletionPolicy { return g.Spec.DeletionPolicy }

// KitAdoptionAllowed implements operatorkit.Object.
func (g *Gadget) KitAdoptionAllowed() bool { return g.Spec.AdoptExisting }
