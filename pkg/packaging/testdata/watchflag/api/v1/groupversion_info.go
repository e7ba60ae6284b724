// Package v1 contains the API of the watchflag fixture.
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group version of the fixture's kinds.
	GroupVersion = schema.GroupVersion{Group: "apps.example.com", Version: "v1"}

	// SchemeBuilder registers them.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds them to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
