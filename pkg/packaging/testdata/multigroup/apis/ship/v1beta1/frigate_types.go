package v1beta1

// FrigateSpec defines the desired state of Frigate
type FrigateSpec struct {
	// Crew is the number of sailors.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Crew",xDescriptors="urn:alm:descriptor:com.tectonic.ui:podCount"
	Crew int32 `json:"crew,omitempty"`
}

// FrigateStatus defines the observed state of Frigate
type FrigateStatus struct{}

//+kubebuilder:object:root=true
//+kubebuilder:subresource:status
//+operator-sdk:csv:customresourcedefinitions:displayName="Frigate"

// Frigate is the Schema for the frigates API
type Frigate struct {
	Spec   FrigateSpec   `json:"spec,omitempty"`
	Status FrigateStatus `json:"status,omitempty"`
}
