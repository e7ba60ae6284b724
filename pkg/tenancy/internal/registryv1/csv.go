package registryv1

import (
	"errors"
	"fmt"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"opctl.dev/opctl/pkg/tenancy/quota"
)

// bundleObjects are a registry+v1 bundle's objects, sorted out: the CSV,
// decoded with its quantities bounded first, its install modes, the CRDs
// and the rest. The olm and bundle backends read bundles through it.
type bundleObjects struct {
	csv          *operatorsv1alpha1.ClusterServiceVersion
	installModes map[operatorsv1alpha1.InstallModeType]bool
	crds, others []*unstructured.Unstructured
}

func splitBundle(objs []*unstructured.Unstructured) (*bundleObjects, error) {
	b := &bundleObjects{installModes: map[operatorsv1alpha1.InstallModeType]bool{}}
	for _, u := range objs {
		switch u.GetKind() {
		case "ClusterServiceVersion":
			if err := quota.BoundedQuantities(u.Object, ""); err != nil {
				return nil, fmt.Errorf("reading the CSV %s: %w", u.GetName(), err)
			}
			b.csv = &operatorsv1alpha1.ClusterServiceVersion{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, b.csv); err != nil {
				return nil, fmt.Errorf("reading the CSV %s: %w", u.GetName(), err)
			}
		case "CustomResourceDefinition":
			b.crds = append(b.crds, u)
		default:
			b.others = append(b.others, u)
		}
	}
	if b.csv == nil {
		return nil, errors.New("the bundle has no ClusterServiceVersion")
	}
	for _, m := range b.csv.Spec.InstallModes {
		b.installModes[m.Type] = m.Supported
	}
	return b, nil
}
