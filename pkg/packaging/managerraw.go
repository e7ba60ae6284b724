package packaging

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// rawContainers returns the manager pod's containers as maps.
func rawContainers(d *unstructured.Unstructured) ([]any, error) {
	cs, found, err := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if err != nil || !found {
		return nil, fmt.Errorf("manager Deployment %s: spec.template.spec.containers: %v", d.GetName(), err)
	}
	return cs, nil
}

// setRawImage sets the image of container name in the raw Deployment.
func setRawImage(d *unstructured.Unstructured, name, image string) error {
	cs, err := rawContainers(d)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if m := c.(map[string]any); m["name"] == name {
			m["image"] = image
		}
	}
	return unstructured.SetNestedSlice(d.Object, cs, "spec", "template", "spec", "containers")
}
