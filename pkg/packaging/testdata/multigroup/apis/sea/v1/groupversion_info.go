// Package v1 contains API Schema definitions for the sea v1 API group
// +kubebuilder:object:generate=true
// +groupName=sea.example.com
package v1
