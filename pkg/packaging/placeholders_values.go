package packaging

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Values the chart takes from the manager (affinity, tolerations,
// resources, args, …) keep the placeholders of their defaults as written:
// the template fills them where it renders the value, so placeholders.VAR
// changes every place the placeholder was, and a value the user sets
// replaces the project's as usual.

// placeheldValues finds the values whose defaults hold placeholders, by
// values path (.Values.affinity), with the placeholders each holds,
// sorted. The placeholders and images groups and opctl.yaml's extraValues,
// which the chart's templates do not render, are not looked at.
func placeheldValues(vs []value, extra map[string]any) map[string][]string {
	out := map[string][]string{}
	var walk func(vs []value, prefix string)
	walk = func(vs []value, prefix string) {
		for _, v := range vs {
			path := prefix + "." + v.Key
			switch {
			case prefix == ".Values" && (v.Key == "placeholders" || v.Key == "images"):
			case prefix == ".Values" && extra[v.Key] != nil:
			case v.Kids != nil:
				walk(v.Kids, path)
			default:
				if uses := PlaceholdersIn(map[string]any{"v": v.Val}); len(uses) > 0 {
					slices.Sort(uses) // PlaceholdersIn walks maps in any order
					out[path] = uses
				}
			}
		}
	}
	walk(vs, ".Values")
	return out
}

// notePlaceheld says in the doc of each value found by placeheldValues
// which values fill its placeholders, and drops the pattern or enum of a
// leaf, which the placeholder's text would not meet.
func notePlaceheld(vs []value, found map[string][]string, kos []KoImage, prefix string) {
	for i := range vs {
		v := &vs[i]
		path := prefix + "." + v.Key
		if v.Kids != nil {
			notePlaceheld(v.Kids, found, kos, path)
			continue
		}
		uses := found[path]
		if len(uses) == 0 {
			continue
		}
		var from []string
		for _, use := range uses {
			name := ""
			if g := placeholderPattern.FindStringSubmatch(use); g != nil {
				name = "placeholders." + g[1]
			} else if i := slices.IndexFunc(kos, func(k KoImage) bool { return k.Ref == use }); i >= 0 {
				name = "images." + kos[i].Name
			}
			if name != "" && !slices.Contains(from, name) {
				from = append(from, name)
			}
		}
		it := "it"
		if len(uses) > 1 {
			it = "them"
		}
		v.Doc += fmt.Sprintf(" Holds %s: the chart fills %s from %s.", strings.Join(uses, ", "), it, strings.Join(from, ", "))
		v.Pattern, v.Enum = "", nil
	}
}

// filledValueHelper is the chart's "<chart>.filledValue" helper: called
// with (list $ v), it returns v as YAML with each placeholder and ko image
// in its strings filled as "<chart>.placeholders" fills a string. It works
// on v's JSON, so filled strings stay strings.
func filledValueHelper(chart string, phs []Placeholder, kos []KoImage) string {
	var b strings.Builder
	b.WriteString("\n{{/* A value whose default holds placeholders (${VAR}, ko://), as YAML with them filled as in \"" + chart + ".placeholders\". Call with (list $ <value>). */}}\n")
	fmt.Fprintf(&b, "{{- define %q -}}\n", chart+".filledValue")
	fillLines(&b, `toJson (dict "v" (index . 1))`, phs, kos, true)
	b.WriteString("{{- toYaml (get (fromJson $s) \"v\") -}}\n{{- end }}\n")
	return b.String()
}

// jsonContent is s as it appears inside a JSON string written by Helm's
// toJson (encoding/json, which escapes <, > and &).
func jsonContent(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// yamlOf is the expression rendering v, a value whose default is values
// path, as YAML: through the filledValue helper when that default holds
// placeholders.
func (t *templater) yamlOf(path, v string) string {
	if len(t.placeheld[path]) == 0 {
		return "toYaml " + v
	}
	t.filledValues = true
	return fmt.Sprintf(`include "%s.filledValue" (list $ %s)`, t.chart, v)
}

// mapOf is the map at values path as a template argument, its
// placeholders filled when its default holds some.
func (t *templater) mapOf(path string) string {
	if len(t.placeheld[path]) == 0 {
		return path
	}
	return "(" + t.yamlOf(path, path) + " | fromYaml)"
}

// stringOf is the action rendering the string v, whose default is values
// path, quoted: with its placeholders filled when that default holds some.
func (t *templater) stringOf(path, v string) string {
	if len(t.placeheld[path]) == 0 {
		return "{{ " + v + " | quote }}"
	}
	return t.filled(v)
}
