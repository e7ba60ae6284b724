package validate

import (
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// headerOf returns the kind and metadata.name of a YAML document.
func headerOf(b []byte) (kind, name string) {
	var h struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
	}
	_ = yaml.Unmarshal(b, &h)
	return h.Kind, h.Metadata.Name
}

// locate fills in the line of findings that name a file: the line of the
// object's kind, the start of the object in the file.
func locate(r *Report, root string) {
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.File == "" || f.Line != 0 {
			continue
		}
		f.Line = lineOfKey(filepath.Join(root, filepath.FromSlash(f.File)), "kind")
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
