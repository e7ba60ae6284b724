// Package v1alpha1 is the fixture's API.
// +groupName=agg.example.com
package v1alpha1

// GaugeSpec is what a Gauge measures.
type GaugeSpec struct {
	// Target is the value to reach.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Target"
	Target int `json:"target,omitempty"`
}

// Gauge is one measured value.
// +operator-sdk:csv:customresourcedefinitions:displayName="Gauge",resources={{ConfigMap,v1}}
type Gauge struct {
	Spec GaugeSpec `json:"spec,omitempty"`
}
