package packaging

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// component is an optional kustomize component of kubebuilder's layout,
// which config/default often leaves commented out. The chart carries it
// behind <Value>.enabled: on when the overlay includes it, else off.
type component struct{ Dir, Value string }

var components = []component{{"prometheus", "prometheus"}, {"network-policy", "networkPolicy"}}

// loadComponents builds the project's optional components and records
// which objects belong to them; objects the overlay lacks go to Optional.
// A component kustomize cannot build is left out with a warning.
func (p *Project) loadComponents() {
	p.componentValues = map[string]string{}
	p.Components = map[string]bool{}
	for _, c := range components {
		dir := filepath.Join(p.Dir, "config", c.Dir)
		if _, err := os.Stat(filepath.Join(dir, "kustomization.yaml")); err != nil {
			continue
		}
		objs, err := buildOverlay(dir)
		if err != nil {
			// The overlay does not include it, so kustomize never built
			// it either: a component that does not build is left out.
			p.warnf("config/%s is not carried as the optional %s component: %v", c.Dir, c.Value, err)
			continue
		}
		on := false
		for _, o := range objs {
			name := p.NamePrefix + strings.TrimPrefix(o.GetName(), p.NamePrefix)
			key := o.GetKind() + "/" + name
			p.componentValues[key] = c.Value
			if slices.ContainsFunc(p.Objects, func(e *unstructured.Unstructured) bool { return e.GetKind()+"/"+e.GetName() == key }) {
				on = true
				continue
			}
			o.SetName(name)
			if o.GetNamespace() != "" {
				o.SetNamespace(p.Namespace)
			}
			p.Optional = append(p.Optional, o)
		}
		p.Components[c.Value] = on
	}
	slices.SortFunc(p.Optional, compareObjects)
}

// componentOf is the value that gates o, or "".
func (p *Project) componentOf(o *unstructured.Unstructured) string {
	return p.componentValues[o.GetKind()+"/"+o.GetName()]
}
