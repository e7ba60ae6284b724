// Package v1alpha1 is the test.operatorkit.opctl.dev/v1alpha1 API.
// +kubebuilder:object:generate=true
// +groupName=test.operatorkit.opctl.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of Widget and Gadget.
	GroupVersion = schema.GroupVersion{Group: "test.operatorkit.opctl.dev", Version: "v1alpha1"}
	// SchemeBuilder registers the types of this group version.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{}, &Gadget{}, &GadgetList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
