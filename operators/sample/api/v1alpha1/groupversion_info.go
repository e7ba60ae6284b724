// Package v1alpha1 is the kv.opctl.dev/v1alpha1 API of the sample operator:
// the KVStore kind, a Redis-protocol key-value store run with Valkey.
// +kubebuilder:object:generate=true
// +groupName=kv.opctl.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of KVStore.
	GroupVersion = schema.GroupVersion{Group: "kv.opctl.dev", Version: "v1alpha1"}
	// SchemeBuilder registers the types of this group version.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &KVStore{}, &KVStoreList{}, &KVBackup{}, &KVBackupList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
