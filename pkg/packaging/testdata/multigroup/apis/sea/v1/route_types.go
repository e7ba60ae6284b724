package v1

// RouteSpec defines the desired state of Route
type RouteSpec struct {
	// Ports the route calls at.
	Ports []string `json:"ports,omitempty"`
}

// Route is the Schema for the routes API
// +kubebuilder:object:root=true
type Route struct {
	Spec RouteSpec `json:"spec,omitempty"`
}
