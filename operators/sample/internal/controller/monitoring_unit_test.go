package controller

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

// TestServiceMonitorGatedOnTheAPI: the store's objects include a
// ServiceMonitor only where the cluster serves the API.
func TestServiceMonitorGatedOnTheAPI(t *testing.T) {
	scheme := unitScheme(t)
	k := &kvv1.KVStore{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"}}
	for _, served := range []bool{false, true} {
		mapper := meta.NewDefaultRESTMapper(nil)
		if served {
			mapper.Add(serviceMonitorKind, meta.RESTScopeNamespace)
		}
		h := &Handler{Client: fake.NewClientBuilder().WithScheme(scheme).Build(), RESTMapper: mapper}
		objs, err := h.Build(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, o := range objs {
			if o.GetObjectKind().GroupVersionKind() == serviceMonitorKind {
				found = true
			}
		}
		if found != served {
			t.Errorf("API served %v: ServiceMonitor built %v", served, found)
		}
	}
}
