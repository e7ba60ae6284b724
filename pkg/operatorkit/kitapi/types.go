package kitapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

// DeletionPolicy says what happens to the managed objects when a custom
// resource is deleted.
// +kubebuilder:validation:Enum=Delete;Orphan
type DeletionPolicy string

const (
	// DeletionDelete removes every managed object and waits until they are
	// gone. It is the default.
	DeletionDelete DeletionPolicy = "Delete"
	// DeletionOrphan disconnects: it removes ownerReferences and the
	// finalizer and leaves the workload running.
	DeletionOrphan DeletionPolicy = "Orphan"
)

// Status is the part of a custom resource's status that operatorkit
// manages. Embed it inline:
//
//	type MyStatus struct {
//		kitapi.Status `json:",inline"`
//		...
//	}
type Status struct {
	// ObservedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase is the application lifecycle phase: Starting, Running,
	// Servicing, Stopping, Ended or Failed.
	// +kubebuilder:validation:Enum=Starting;Running;Servicing;Stopping;Ended;Failed
	// +optional
	Phase lifecycle.Phase `json:"phase,omitempty"`
	// Conditions are Ready, Progressing, Degraded and Lifecycle, plus the
	// kstatus conditions Reconciling and Stalled while they are true.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// DeepCopyInto copies s into out.
func (s *Status) DeepCopyInto(out *Status) {
	*out = *s
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

// DeepCopy returns a copy of s.
func (s *Status) DeepCopy() *Status {
	if s == nil {
		return nil
	}
	out := new(Status)
	s.DeepCopyInto(out)
	return out
}
