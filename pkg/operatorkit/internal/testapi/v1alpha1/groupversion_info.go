// Package v1alpha1 is the test.operatorkit.opctl.dev/v1alpha1 API.
// +kubebuilder:object:generate=true
// +groupName=test.operatorkit.opctl.dev
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the API group and version of Widget.
	GroupVersion = schema.GroupVersion{Group: "test.operatorkit.opctl.dev", Version: "v1alpha1"}
	// SchemeBuilder registers the types of this group version.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
