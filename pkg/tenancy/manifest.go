package tenancy

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// manifestDoc is one document of a Helm manifest, in order: its leading
// comments (Helm's "# Source:"), and the object, or the parse error.
type manifestDoc struct {
	comments []string
	obj      *unstructured.Unstructured // nil for an empty document
	err      error
}

// manifestDocs splits a Helm manifest into its documents, in order, and
// parses each.
func manifestDocs(manifest string) []manifestDoc {
	docs := splitManifest(manifest)
	out := make([]manifestDoc, 0, len(docs))
	for _, doc := range docs {
		var d manifestDoc
		for line := range strings.SplitSeq(doc, "\n") {
			if !strings.HasPrefix(line, "#") {
				break
			}
			d.comments = append(d.comments, line)
		}
		u := &unstructured.Unstructured{}
		if d.err = yaml.Unmarshal([]byte(doc), &u.Object); d.err == nil && len(u.Object) > 0 {
			d.obj = u
		}
		out = append(out, d)
	}
	return out
}

// splitManifest splits a manifest into documents exactly as Helm's
// releaseutil.SplitManifests does (the tamper check must see what Helm
// acts on), in order, without its regular expression, which was a third
// of the controller's manifest parsing: a separator is "---" at the start
// or after a newline, with the whitespace around it; documents are
// trimmed and empty ones dropped.
func splitManifest(manifest string) []string {
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
