package guard

import (
	"encoding/json"
	"strconv"
	"strings"

	goyaml "go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// ManifestDoc is one document of a Helm manifest, in order: its leading
// comments (Helm's "# Source:"), and the object, or the parse error.
type ManifestDoc struct {
	comments []string
	Obj      *unstructured.Unstructured // nil for an empty document
	Err      error
}

// ManifestDocs splits a Helm manifest into its documents, in order, and
// parses each.
func ManifestDocs(manifest string) []ManifestDoc {
	docs := SplitManifest(manifest)
	out := make([]ManifestDoc, 0, len(docs))
	for _, doc := range docs {
		out = append(out, ParseDoc(doc))
	}
	return out
}

// ParseDoc parses one document of a manifest.
func ParseDoc(doc string) ManifestDoc {
	var d ManifestDoc
	for line := range strings.SplitSeq(doc, "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		d.comments = append(d.comments, line)
	}
	u := &unstructured.Unstructured{}
	if d.Err = yaml.Unmarshal([]byte(doc), &u.Object); d.Err == nil && len(u.Object) > 0 {
		d.Obj = u
	}
	return d
}

// SplitManifest splits a manifest into documents exactly as Helm's
// releaseutil.SplitManifests does (the tamper check must see what Helm
// acts on), in order, without its regular expression, which was a third
// of the controller's manifest parsing: a separator is "---" at the start
// or after a newline, with the whitespace around it; documents are
// trimmed and empty ones dropped.
func SplitManifest(manifest string) []string {
	s := strings.TrimSpace(manifest)
	var out []string
	add := func(d string) {
		if d != "" {
			out = append(out, strings.TrimSpace(d))
		}
	}
	start, from := 0, 0
	if strings.HasPrefix(s, "---") {
		start = skipSpace(s, 3)
		from = start
	}
	for {
		j := strings.Index(s[from:], "\n---")
		if j < 0 {
			break
		}
		nl := from + j
		// The separator starts where the whitespace before the newline
		// does, but not before the end of the last one.
		p := nl
		for p > from && isSpace(s[p-1]) {
			p--
		}
		add(s[start:p])
		start = skipSpace(s, nl+4)
		from = start
	}
	add(s[start:])
	return out
}

// isSpace is the \s of Go's regular expressions.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// skipSpace returns the index of the first non-space byte of s at or
// after i.
func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// manifestYAML is what sigs.k8s.io/yaml's Marshal makes of a parsed
// manifest object, without its detour: Marshal writes JSON, parses that
// back as YAML and emits the result, which was the larger part of the
// render guard's work. The detour's one effect on such an object is on
// floats, which JSON may write as integers; jsonNumbers mirrors it. It
// rewrites obj's floats in place.
func manifestYAML(obj map[string]any) ([]byte, error) {
	if err := jsonNumbers(obj); err != nil {
		return nil, err
	}
	return goyaml.Marshal(obj)
}

// jsonNumbers replaces each float in v (maps and slices, in place) with
// what YAML reads from the float's JSON text: an integer when JSON writes
// it as one, as sigs.k8s.io/yaml's JSON detour does.
func jsonNumbers(v any) error {
	var err error
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if x[k], err = jsonNumber(e); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if x[i], err = jsonNumber(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonNumber is x with its floats as jsonNumbers makes them.
func jsonNumber(x any) (any, error) {
	f, ok := x.(float64)
	if !ok {
		return x, jsonNumbers(x)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	if i, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return i, nil
	}
	if u, err := strconv.ParseUint(string(b), 10, 64); err == nil {
		return u, nil
	}
	return f, nil
}
