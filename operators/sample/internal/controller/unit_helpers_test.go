package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

// unitScheme is the scheme of the unit tests' fake clients: the built-in
// kinds and the KVStore API.
func unitScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kvv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return scheme
}
