package packaging

import (
	"fmt"
	"strings"
)

// withBlock renders key: the YAML of a values path, only when it is set.
func (t *templater) withBlock(key, path string) func(indent int) string {
	yaml := t.yamlOf(path, ".")
	return func(indent int) string {
		pad := strings.Repeat(" ", indent)
		return fmt.Sprintf("%s{{- with %s }}\n%s%s:\n%s  {{- %s | nindent %d }}\n%s{{- end }}", pad, path, pad, key, pad, yaml, indent+2, pad)
	}
}

// withContent renders the items of a list value, or the entries of a map
// value, into the list or map that holds the line.
func withContent(path string) func(indent int) string {
	return func(indent int) string {
		pad := strings.Repeat(" ", indent)
		return fmt.Sprintf("%s{{- with %s }}\n%s{{- toYaml . | nindent %d }}\n%s{{- end }}", pad, path, pad, indent, pad)
	}
}

// appendValues appends the items of values path to list m[key], creating
// the list when m has none.
func (t *templater) appendValues(m map[string]any, key, path string) {
	list, _ := m[key].([]any)
	m[key] = append(list, map[string]any{t.line(withContent(path)): ""})
}

// mergeValues merges the entries of values path into map m[key].
func (t *templater) mergeValues(m map[string]any, key, path string) {
	sub, _ := m[key].(map[string]any)
	if sub == nil {
		sub = map[string]any{}
	}
	sub[t.line(withContent(path))] = ""
	m[key] = sub
}

// podExtras renders the optional scheduling fields of the pod spec. own is
// the chart's name of a PriorityClass the chart carries for the pod, or "".
func (t *templater) podExtras(own string) func(indent int) string {
	var blocks []func(int) string
	for _, f := range []string{"imagePullSecrets", "nodeSelector", "tolerations", "affinity", "topologySpreadConstraints"} {
		blocks = append(blocks, t.withBlock(f, ".Values."+f))
	}
	priority := t.stringOf(".Values.priorityClassName", ".")
	return func(indent int) string {
		var parts []string
		for _, b := range blocks {
			parts = append(parts, b(indent))
		}
		pad := strings.Repeat(" ", indent)
		if own != "" {
			parts = append(parts, fmt.Sprintf("%spriorityClassName: {{ default (%s) .Values.priorityClassName | quote }}", pad, own))
		} else {
			parts = append(parts, fmt.Sprintf("%s{{- with .Values.priorityClassName }}\n%spriorityClassName: %s\n%s{{- end }}", pad, pad, priority, pad))
		}
		return strings.Join(parts, "\n")
	}
}
