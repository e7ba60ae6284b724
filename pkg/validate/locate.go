package validate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// header is the part of an object headerOf reads.
type header struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
}

// headerOf returns the kind and metadata.name of a YAML document. It
// parses only the document's top-level kind and metadata entries
// (headerEntries) when it can, a manifest's spec being most of its bytes,
// and the whole document otherwise.
func headerOf(b []byte) (kind, name string) {
	var h header
	if part, ok := headerEntries(b); !ok || yaml.Unmarshal(part, &h) != nil {
		h = header{}
		_ = yaml.Unmarshal(b, &h)
	}
	return h.Kind, h.Metadata.Name
}

// headerEntries returns the top-level kind and metadata entries of the
// first YAML document in b, each a line starting at column 0 with its
// more indented, blank or comment lines and compact sequence items. ok is
// false when that cannot stand for the document: JSON or a directive, a
// merge key or a quoted key at the top level, or an entry missing.
func headerEntries(b []byte) (part []byte, ok bool) {
	var out []byte
	keep, seenKind, seenMeta, started := false, false, false, false
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i+1], b[i+1:]
		} else {
			b = nil
		}
		switch c := line[0]; {
		case c == ' ' || c == '\t' || c == '#' || c == '\n' || c == '\r' || (c == '-' && !isDocMarker(line)):
			// continues the entry before it
		case isDocMarker(line) || bytes.HasPrefix(line, []byte("...")):
			if len(bytes.TrimSpace(line)) > 3 {
				return nil, false // content on the marker's line
			}
			if started {
				b = nil // the first document ends here
				continue
			}
			continue
		case c == '{' || c == '[' || c == '%' || c == '"' || c == '\'' || c == '<' || c == '&' || c == '*' || c == '!':
			return nil, false
		default:
			started = true
			keep = false
			switch {
			case bytes.HasPrefix(line, []byte("kind:")):
				keep, seenKind = true, true
			case bytes.HasPrefix(line, []byte("metadata:")):
				keep, seenMeta = true, true
			}
		}
		if keep {
			out = append(out, line...)
		}
	}
	return out, seenKind && seenMeta
}

// isDocMarker reports whether line is a document start marker (---).
func isDocMarker(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	return ok && (len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r')
}

// locate fills in the line of findings that name a file: the line of the
// object's kind, the start of the object in the file. Each file is parsed
// once, however many findings name it.
func locate(r *Report, root string) {
	lines := map[string]int{}
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.File == "" || f.Line != 0 {
			continue
		}
		line, ok := lines[f.File]
		if !ok {
			line = lineOfKey(filepath.Join(root, filepath.FromSlash(f.File)), "kind")
			lines[f.File] = line
		}
		f.Line = line
	}
}

// lineOfKey returns the 1-based line of the first top-level key in the
// YAML file, or 1.
func lineOfKey(path, key string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil || len(doc.Content) == 0 {
		return 1
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if strings.EqualFold(m.Content[i].Value, key) {
			return m.Content[i].Line
		}
	}
	return 1
}
