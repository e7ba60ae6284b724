package tenancy

import (
	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// createdKube is Helm's Kubernetes client that also reports each object
// Helm created, as the API server returned it. It embeds the concrete
// client so that Helm's optional interfaces (logs, deletion propagation,
// three-way merge) still hold.
type createdKube struct {
	*kube.Client
	created func(runtime.Object)
}

func (k *createdKube) Create(resources kube.ResourceList) (*kube.Result, error) {
	res, err := k.Client.Create(resources)
	if err == nil && res != nil {
		for _, info := range res.Created {
			k.created(info.Object)
		}
	}
	return res, err
}

// created remembers an object Helm just made from a release manifest as
// matching it: drift correction then reads it live only once it changes.
// Only a created object is trusted so: an upgrade patches objects that
// may have drifted in fields the patch does not touch.
func (m *driftMemo) created(obj runtime.Object) {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	o, err := meta.Accessor(obj)
	if err != nil || driftKinds[kind] == nil || o.GetResourceVersion() == "" {
		return
	}
	m.set(driftKey(o.GetNamespace(), kind, o.GetName()), o.GetResourceVersion())
}
