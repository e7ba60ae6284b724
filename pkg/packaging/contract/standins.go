package contract

import "strings"

// StandIns are values for the paths of a RequiredValues annotation, each
// set to fill(path), as nested maps ready to merge into a chart's values:
// what a check or a measurement renders with where a user must set the
// value to install.
func StandIns(ann string, fill func(path string) any) map[string]any {
	out := map[string]any{}
	for _, path := range SplitValues(ann) {
		keys := strings.Split(path, ".")
		m := out
		for _, k := range keys[:len(keys)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[keys[len(keys)-1]] = fill(path)
	}
	return out
}

// FormatValues is the RequiredValues annotation of paths, in order.
func FormatValues(paths []string) string {
	return strings.Join(paths, ",")
}
