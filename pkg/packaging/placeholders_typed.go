package packaging

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A placeholder where the API takes no string (a quantity, a number, a
// boolean) leaves the manager Deployment unreadable as typed, though
// kustomize builds it: envsubst runs on the text before anything reads it.
// decodeManager reads such a field as envsubst would fill it, from
// --set-env or the placeholder's default, and keeps placeholders as
// written wherever a string is allowed. The manager container's resources
// keep theirs in the chart too: quantities may be strings, so the
// resources value carries them and the template fills them (filledValue).
// Elsewhere the chart and the bundle carry the filled field, with a
// warning.

// decodeManager reads the manager Deployment d as typed, filling the
// placeholders that stand where the API takes no string.
func (p *Project) decodeManager(d *unstructured.Unstructured) (*appsv1.Deployment, error) {
	m := &appsv1.Deployment{}
	err := fromUnstructured(d, m)
	paths := placeholderPaths(d.Object, nil)
	if err == nil || len(paths) == 0 {
		return m, err
	}
	m = &appsv1.Deployment{}
	known := map[string]bool{}
	for _, path := range paths {
		for _, g := range placeholderPattern.FindAllStringSubmatch(valueAt(d.Object, path).(string), -1) {
			known[g[1]] = true
		}
	}
	filled := d.DeepCopy()
	var left []string
	for _, path := range paths {
		s, l := substitute(valueAt(d.Object, path).(string), known, p.setEnv)
		setAt(filled.Object, path, scalar(s))
		left = append(left, l...)
	}
	if fromUnstructured(filled, m) != nil {
		if len(left) == 0 {
			return nil, err
		}
		slices.Sort(left)
		return nil, fmt.Errorf("%w: its placeholders %s, which have no default, may stand where the API takes no string, so opctl cannot read it: pass --set-env VAR=value for each", err, strings.Join(slices.Compact(left), ", "))
	}
	// Back as written wherever the Deployment still reads.
	var typed [][]any
	for _, path := range paths {
		was := valueAt(filled.Object, path)
		setAt(filled.Object, path, valueAt(d.Object, path))
		if fromUnstructured(filled, &appsv1.Deployment{}) != nil {
			setAt(filled.Object, path, was)
			typed = append(typed, path)
		}
	}
	m = &appsv1.Deployment{}
	if err := fromUnstructured(filled, m); err != nil {
		return nil, err
	}
	resources := []any{"none"} // no container: Load refuses the manager
	if len(m.Spec.Template.Spec.Containers) > 0 {
		resources = managerResourcesPath(d, managerContainer(m).Name)
	}
	for _, path := range typed {
		if len(path) > len(resources) && slices.Equal(path[:len(resources)], resources) {
			continue // the resources value keeps them
		}
		p.warnf("manager Deployment %s: %s is %q, a placeholder where the API takes no string: the chart and the bundle carry %v, as envsubst fills it from --set-env or the default, and no chart value changes it", d.GetName(), pathText(path), valueAt(d.Object, path), valueAt(filled.Object, path))
		setAt(d.Object, path, valueAt(filled.Object, path))
	}
	return m, nil
}

// rawManagerResources is the manager container's resources as the overlay
// has them, when they hold placeholders (decodeManager); nil otherwise.
func (p *Project) rawManagerResources() map[string]any {
	c := valueAt(p.managerRaw.Object, managerResourcesPath(p.managerRaw, managerContainer(p.Manager).Name))
	r, _ := c.(map[string]any)
	if len(placeholderPaths(r, nil)) == 0 {
		return nil
	}
	return r
}

// managerResourcesPath is the path of the resources of container name in
// the raw Deployment d.
func managerResourcesPath(d *unstructured.Unstructured, name string) []any {
	cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	i := slices.IndexFunc(cs, func(c any) bool { m, _ := c.(map[string]any); return m["name"] == name })
	return []any{"spec", "template", "spec", "containers", max(i, 0), "resources"}
}

// placeholderPaths lists the paths (map keys and list indices) of the
// strings in v that hold ${VAR} placeholders, in key order.
func placeholderPaths(v any, at []any) [][]any {
	var out [][]any
	switch t := v.(type) {
	case string:
		if placeholderPattern.MatchString(t) {
			out = append(out, slices.Clone(at))
		}
	case map[string]any:
		for _, k := range sortedKeys(t) {
			out = append(out, placeholderPaths(t[k], append(at, k))...)
		}
	case []any:
		for i, e := range t {
			out = append(out, placeholderPaths(e, append(at, i))...)
		}
	}
	return out
}

// valueAt is the value at path in v, or nil.
func valueAt(v any, path []any) any {
	for _, k := range path {
		switch t := v.(type) {
		case map[string]any:
			v = t[k.(string)]
		case []any:
			i, _ := k.(int)
			if i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

// setAt sets the value at path, which exists, in v.
func setAt(v any, path []any, val any) {
	parent := valueAt(v, path[:len(path)-1])
	switch t := parent.(type) {
	case map[string]any:
		t[path[len(path)-1].(string)] = val
	case []any:
		t[path[len(path)-1].(int)] = val
	}
}

// scalar reads filled text as YAML reads a plain scalar: an integer, a
// number, a boolean, or the string.
func scalar(s string) any {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	if b, err := strconv.ParseBool(s); err == nil && (s == "true" || s == "false") {
		return b
	}
	return s
}

// pathText writes path as a field path: spec.template.spec.containers[0].
func pathText(path []any) string {
	var b strings.Builder
	for _, k := range path {
		if i, ok := k.(int); ok {
			fmt.Fprintf(&b, "[%d]", i)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(k.(string))
	}
	return b.String()
}
