package packaging

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// A placeholder line is an envsubst expression the project's release step
// expands into a whole "key: value" line of a map, with drone/envsubst's
// substitution forms: `${ROLE/#arn/eks.amazonaws.com/role-arn: arn}` in a
// ServiceAccount's annotations is that annotation when ROLE holds an ARN,
// and nothing when ROLE is unset. kustomize reads the line as an entry
// whose key starts with "${", which the API server refuses. The chart
// renders the line from placeholders.VAR; the bundle expands it from
// --set-env, or leaves it out as envsubst does for an unset variable.

// substLinePattern is ${VAR/#prefix/replacement}, ${VAR/%suffix/replacement}
// and ${VAR//text/replacement}, as one line.
var substLinePattern = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)(/#|/%|//)([^/}]*)/([^}]*)\}$`)

// substLine is one placeholder line.
type substLine struct {
	Var, Op, Pattern, Repl string
	Text                   string // as written
}

// parseSubstLine reads the map entry key: val as a placeholder line.
func parseSubstLine(key string, val any) (substLine, bool) {
	if !strings.HasPrefix(key, "${") {
		return substLine{}, false
	}
	text := key
	if s, ok := val.(string); ok {
		text += ": " + s
	} else if val != nil {
		return substLine{}, false
	}
	m := substLinePattern.FindStringSubmatch(text)
	if m == nil {
		return substLine{}, false
	}
	return substLine{Var: m[1], Op: m[2], Pattern: m[3], Repl: m[4], Text: text}, true
}

// expand is the line envsubst writes for the variable's value v.
func (l substLine) expand(v string) string {
	switch l.Op {
	case "/#":
		if rest, ok := strings.CutPrefix(v, l.Pattern); ok {
			return l.Repl + rest
		}
	case "/%":
		if rest, ok := strings.CutSuffix(v, l.Pattern); ok {
			return rest + l.Repl
		}
	case "//":
		if l.Pattern != "" {
			return strings.ReplaceAll(v, l.Pattern, l.Repl)
		}
	}
	return v
}

// template is the chart's lines for l at indentation pad: the expanded
// line when placeholders.VAR is set, nothing otherwise, and a failure
// naming the value when the expansion is no "key: value" line.
func (l substLine) template(pad string) string {
	var expr string
	switch l.Op {
	case "/#":
		expr = fmt.Sprintf(`ternary (print %q (trimPrefix %q .)) . (hasPrefix %q .)`, l.Repl, l.Pattern, l.Pattern)
	case "/%":
		expr = fmt.Sprintf(`ternary (print (trimSuffix %q .) %q) . (hasSuffix %q .)`, l.Pattern, l.Repl, l.Pattern)
	default:
		expr = fmt.Sprintf(`replace %q %q .`, l.Pattern, l.Repl)
	}
	msg := fmt.Sprintf("placeholders.%s=%%q gives %%q, not one \"key: value\" line (the project's manifests use %s)", l.Var, l.Text)
	return fmt.Sprintf("%s{{- with (index $.Values.placeholders %q) }}\n%s{{- $line := %s }}\n%s{{- if not (regexMatch \"^[^:#-][^:]*: \" $line) }}{{ fail (printf %q . $line) }}{{ end }}\n%s{{ $line }}\n%s{{- end }}",
		pad, l.Var, pad, expr, pad, msg, pad, pad)
}

// eachPlaceholderKey calls f with every map of v and each of its keys
// that starts with "${", in key order.
func eachPlaceholderKey(v any, f func(m map[string]any, key string)) {
	switch t := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			if strings.HasPrefix(k, "${") {
				f(t, k)
				continue
			}
			eachPlaceholderKey(t[k], f)
		}
	case []any:
		for _, e := range t {
			eachPlaceholderKey(e, f)
		}
	}
}

// substLines lists the placeholder lines of obj.
func substLines(obj map[string]any) []substLine {
	var out []substLine
	eachPlaceholderKey(obj, func(m map[string]any, key string) {
		if l, ok := parseSubstLine(key, m[key]); ok {
			out = append(out, l)
		}
	})
	return out
}

// dropPlaceholderKeys leaves out of the objects, with a warning each, the
// map entries whose key holds a placeholder in a form opctl cannot fill
// (only whole placeholder lines can be): the API server would refuse the
// key.
func (p *Project) dropPlaceholderKeys(objs []*unstructured.Unstructured) {
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			continue
		}
		eachPlaceholderKey(o.Object, func(m map[string]any, key string) {
			if _, ok := parseSubstLine(key, m[key]); ok {
				return
			}
			delete(m, key)
			p.warnf("%s %s: the key %q holds a placeholder in a form opctl cannot make a value of (only a whole line ${VAR/#prefix/replacement}, ${VAR/%%suffix/replacement} or ${VAR//text/replacement} can be), and the API server would refuse it: left out; fill it in the project, or set it in the chart", o.GetKind(), o.GetName(), key)
		})
	}
}

// renderSubstLines replaces the placeholder lines of obj with the chart's
// template lines.
func (t *templater) renderSubstLines(obj map[string]any) {
	eachPlaceholderKey(obj, func(m map[string]any, key string) {
		l, ok := parseSubstLine(key, m[key])
		if !ok {
			return
		}
		delete(m, key)
		m[t.line(func(indent int) string { return l.template(strings.Repeat(" ", indent)) })] = ""
	})
}

// expandSubstLines replaces the placeholder lines of obj with their
// expansion from env (nothing for an unset variable), as envsubst would;
// changed reports whether there was any. A line that expands to no
// "key: value" is an error naming it.
func expandSubstLines(obj map[string]any, env map[string]string) (changed bool, err error) {
	eachPlaceholderKey(obj, func(m map[string]any, key string) {
		l, ok := parseSubstLine(key, m[key])
		if !ok || err != nil {
			return
		}
		delete(m, key)
		changed = true
		line := l.expand(env[l.Var])
		if strings.TrimSpace(line) == "" {
			return
		}
		var entry map[string]any
		if e := yaml.Unmarshal([]byte(line), &entry); e != nil || len(entry) != 1 {
			err = fmt.Errorf("%s with %s=%q gives %q, not one \"key: value\" line: fix --set-env %s", l.Text, l.Var, env[l.Var], line, l.Var)
			return
		}
		for k, v := range entry {
			m[k] = v
		}
	})
	return changed, err
}
