package packaging

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// crdWithPAC is a copy of crd with its platform-as-code annotations.
func (p *Project) crdWithPAC(crd *apiextensionsv1.CustomResourceDefinition, pacs []PlatformAsCode) *apiextensionsv1.CustomResourceDefinition {
	c := crd.DeepCopy()
	ann := c.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	for _, pac := range pacs {
		if pac.CRD == c.Name {
			for k, v := range pac.Annotations {
				ann[k] = v
			}
		}
	}
	c.SetAnnotations(ann)
	return c
}

// crdMap converts a CRD for output, without status and server fields.
func crdMap(c *apiextensionsv1.CustomResourceDefinition) (map[string]any, error) {
	c.APIVersion, c.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		return nil, fmt.Errorf("CRD %s: %w", c.Name, err)
	}
	delete(m, "status")
	meta := m["metadata"].(map[string]any)
	delete(meta, "creationTimestamp")
	return m, nil
}
