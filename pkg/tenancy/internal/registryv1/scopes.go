package registryv1

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// MapperScopes are BundleRender's ClusterScoped and ClusterResource as the
// API server's discovery (mapper) answers them: an unknown kind is
// namespaced, and the tamper check refuses it if it is not; a resource
// the cluster does not serve counts as cluster-scoped.
func MapperScopes(mapper meta.RESTMapper) (clusterScoped func(schema.GroupVersionKind) bool, clusterResource func(group, resource string) bool) {
	clusterScoped = func(gvk schema.GroupVersionKind) bool {
		scoped, _ := guard.ScopeOf(mapper, gvk)
		return scoped
	}
	clusterResource = func(group, resource string) bool {
		gvk, err := mapper.KindFor(schema.GroupVersionResource{Group: group, Resource: resource})
		if err != nil {
			return true
		}
		scoped, known := guard.ScopeOf(mapper, gvk)
		return scoped || !known
	}
	return clusterScoped, clusterResource
}
