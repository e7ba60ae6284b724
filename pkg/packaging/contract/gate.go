package contract

import "opctl.dev/opctl/internal/lazyre"

// gatePattern is a template's first action when one value turns the whole
// template off: {{- if .Values.path }}. opctl package gates each optional
// part of a chart so (apiService.enabled, prometheus.enabled, ...), and a
// refusal of an object names the value that leaves it out.
var gatePattern = lazyre.New(`^\s*\{\{-?\s*if\s+\.Values\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)\s*-?\}\}`)

// Gate is the value path whose false leaves a chart template's objects
// out, when its first action is a plain condition on one value; "" else.
func Gate(template []byte) string {
	if m := gatePattern().FindSubmatch(template); m != nil {
		return string(m[1])
	}
	return ""
}
