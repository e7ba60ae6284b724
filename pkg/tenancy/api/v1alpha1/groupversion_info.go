// Package v1alpha1 is the tenancy.opctl.dev/v1alpha1 API: Tenant, which
// gives a team namespaces, quota, isolation and its own operator
// instances, and TenantProfile, the defaults many Tenants share.
// +kubebuilder:object:generate=true
// +groupName=tenancy.opctl.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of Tenant.
	GroupVersion = schema.GroupVersion{Group: "tenancy.opctl.dev", Version: "v1alpha1"}
	// SchemeBuilder registers the types of this group version.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Tenant{}, &TenantList{}, &TenantProfile{}, &TenantProfileList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
