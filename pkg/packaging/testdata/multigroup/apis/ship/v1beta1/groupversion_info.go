// Package v1beta1 contains API Schema definitions for the ship v1beta1 API group
// +kubebuilder:object:generate=true
// +groupName=ship.example.com
package v1beta1
