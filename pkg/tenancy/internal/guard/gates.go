package guard

import (
	"strings"

	"helm.sh/helm/v3/pkg/chart"

	"opctl.dev/opctl/pkg/packaging/contract"
)

// TemplateGates maps the source of each template of ch and its
// subcharts, as Helm's manifest names it ("chart/templates/x.yaml"), to the
// value whose false leaves the template's objects out, where its first
// action is a plain condition on one value (contract.Gate).
func TemplateGates(ch *chart.Chart) map[string]string {
	out := map[string]string{}
	var walk func(c *chart.Chart, prefix string)
	walk = func(c *chart.Chart, prefix string) {
		if c == nil || c.Metadata == nil {
			return
		}
		for _, t := range c.Templates {
			if v := contract.Gate(t.Data); v != "" {
				out[prefix+c.Name()+"/"+t.Name] = v
			}
		}
		for _, d := range c.Dependencies() {
			walk(d, prefix+c.Name()+"/charts/")
		}
	}
	walk(ch, "")
	return out
}

// source is the template a document was rendered from, from Helm's
// "# Source:" comment; "" without one.
func (d ManifestDoc) source() string {
	for _, c := range d.comments {
		if s, ok := strings.CutPrefix(c, "# Source: "); ok {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// turnOff says which value leaves d out of the release, when its template
// has one: ", which <value>=false leaves out".
func (g GrantPolicy) turnOff(d ManifestDoc) string {
	if v := g.Gates[d.source()]; v != "" {
		return "; " + v + "=false leaves it out"
	}
	return ""
}
