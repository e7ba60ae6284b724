package kitapi

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ActionPhase is where an asynchronous action is.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type ActionPhase string

// The phases of an action: Pending until a pod of its Job runs, Running,
// then Succeeded or Failed for good.
const (
	ActionPending   ActionPhase = "Pending"
	ActionRunning   ActionPhase = "Running"
	ActionSucceeded ActionPhase = "Succeeded"
	ActionFailed    ActionPhase = "Failed"
)

// ActionStatus is the last observed state of one asynchronous action (a
// Job) of a custom resource. Keep it in the resource's status, so that a
// finished action is not started again after its Job is cleaned up.
type ActionStatus struct {
	// Name of the action, such as backup.
	Name string `json:"name"`
	// Key identifies one run: a new key starts a new run.
	Key string `json:"key"`
	// Job runs it.
	Job   string      `json:"job"`
	Phase ActionPhase `json:"phase"`
	// Attempts is the number of pods started so far.
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// Message explains a failure: the pod's termination message, else the
	// Job's reason. On success it is the termination message of the
	// container that succeeded, if any: the action's result.
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
}

// Finished reports whether the action succeeded or failed for good.
func (s ActionStatus) Finished() bool {
	return s.Phase == ActionSucceeded || s.Phase == ActionFailed
}

// DeepCopyInto copies s into out.
func (s *ActionStatus) DeepCopyInto(out *ActionStatus) {
	*out = *s
	if s.StartTime != nil {
		out.StartTime = s.StartTime.DeepCopy()
	}
	if s.CompletionTime != nil {
		out.CompletionTime = s.CompletionTime.DeepCopy()
	}
}

// DeepCopy copies s.
func (s *ActionStatus) DeepCopy() *ActionStatus {
	if s == nil {
		return nil
	}
	out := new(ActionStatus)
	s.DeepCopyInto(out)
	return out
}
