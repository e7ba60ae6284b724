package packaging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// value is one entry of values.yaml: a documented leaf or a group.
type value struct {
	Key  string
	Doc  string
	Val  any      // a leaf's default
	Enum []string // allowed values of a string leaf
	// Pattern constrains a string leaf, or each item of a list leaf.
	Pattern string
	Free    bool // a leaf object or list whose content is not checked
	// Items is the JSON type of a list leaf's items; Min the least value of
	// an integer leaf and Max its greatest (when not 0).
	Items    string
	Min, Max int
	Kids     []value // a group's entries
	// Required marks a leaf the user must set: the README shows no default.
	Required bool
}

// emitValues renders values.yaml with a "# -- " comment over every entry.
func emitValues(vs []value) ([]byte, error) {
	var b bytes.Buffer
	if err := emitInto(&b, vs, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func emitInto(b *bytes.Buffer, vs []value, indent int) error {
	pad := strings.Repeat(" ", indent)
	for _, v := range vs {
		for _, line := range strings.Split(v.Doc, "\n") {
			fmt.Fprintf(b, "%s# -- %s\n", pad, line)
		}
		if v.Kids != nil {
			fmt.Fprintf(b, "%s%s:\n", pad, v.Key)
			if err := emitInto(b, v.Kids, indent+2); err != nil {
				return err
			}
			continue
		}
		out, err := yaml.Marshal(v.Val)
		if err != nil {
			return fmt.Errorf("values %s: %w", v.Key, err)
		}
		text := strings.TrimSuffix(string(out), "\n")
		if isScalarYAML(v.Val) {
			fmt.Fprintf(b, "%s%s: %s\n", pad, v.Key, text)
			continue
		}
		fmt.Fprintf(b, "%s%s:\n", pad, v.Key)
		for _, line := range strings.Split(text, "\n") {
			fmt.Fprintf(b, "%s  %s\n", pad, line)
		}
	}
	return nil
}

// isScalarYAML reports values that fit on the key's line: scalars and
// empty maps and lists.
func isScalarYAML(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	case []string:
		return len(t) == 0
	case map[string]string:
		return len(t) == 0
	}
	return true
}

// Patterns of values that become object names or namespaces: a DNS-1123
// label or subdomain, or empty for the default.
const (
	dnsLabelPattern     = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	dnsLabelOrEmpty     = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$`
	dnsSubdomainOrEmpty = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
)

// schemaOf builds values.schema.json: groups are closed objects, leaves
// typed from their defaults, free leaves open objects or arrays.
func schemaOf(vs []value) map[string]any {
	props := map[string]any{}
	for _, v := range vs {
		props[v.Key] = leafSchema(v)
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

func leafSchema(v value) map[string]any {
	var s map[string]any
	switch {
	case v.Kids != nil:
		s = schemaOf(v.Kids)
	default:
		s = map[string]any{"type": jsonType(v.Val)}
		if len(v.Enum) > 0 {
			s["enum"] = v.Enum
		}
		if v.Items != "" {
			s["items"] = map[string]any{"type": v.Items}
		}
		if s["type"] == "integer" {
			s["minimum"] = v.Min
			if v.Max != 0 {
				s["maximum"] = v.Max
			}
		}
		if v.Pattern != "" && s["type"] == "array" {
			s["items"] = map[string]any{"type": "string", "pattern": v.Pattern}
		} else if v.Pattern != "" {
			s["pattern"] = v.Pattern
		}
	}
	if v.Doc != "" {
		s["description"] = v.Doc
	}
	return s
}

func jsonType(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case int, int32, int64:
		return "integer"
	case float64:
		return "number"
	case string:
		return "string"
	case []any, []string:
		return "array"
	}
	return "object"
}

// valuesRows lists every leaf as path, type, default and description, for
// the chart README.
func valuesRows(vs []value, prefix string) [][4]string {
	var rows [][4]string
	for _, v := range vs {
		path := prefix + v.Key
		if v.Kids != nil {
			rows = append(rows, valuesRows(v.Kids, path+".")...)
			continue
		}
		def, _ := json.Marshal(v.Val)
		doc := v.Doc
		if len(v.Enum) > 0 {
			doc += " One of: " + strings.Join(v.Enum, ", ") + "."
		}
		shown := "`" + string(def) + "`"
		if v.Required {
			shown = "required"
		}
		rows = append(rows, [4]string{path, jsonType(v.Val), shown, strings.ReplaceAll(doc, "\n", " ")})
	}
	return rows
}
