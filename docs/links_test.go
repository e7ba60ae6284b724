package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// schemeRE matches links that leave the repository (https:, mailto:).
var schemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

func TestLinks(t *testing.T) {
	docs, err := loadDocs()
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]doc{}
	for _, d := range docs {
		byPath[d.path] = d
	}
	checked := 0
	for _, d := range docs {
		for _, l := range d.links {
			if schemeRE.MatchString(l.text) {
				continue
			}
			checked++
			target, fragment, _ := strings.Cut(l.text, "#")
			path := d.path
			if target != "" {
				path = filepath.Join(filepath.Dir(d.path), target)
				if _, err := os.Stat(filepath.Join(root, path)); err != nil {
					t.Errorf("%s:%d: link %s: no file %s", l.file, l.line, l.text, path)
					continue
				}
			}
			if fragment == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			td, ok := byPath[path]
			if !ok {
				b, err := os.ReadFile(filepath.Join(root, path))
				if err != nil {
					t.Fatal(err)
				}
				if td, err = parse(path, string(b)); err != nil {
					t.Fatal(err)
				}
			}
			if !td.anchors[fragment] {
				t.Errorf("%s:%d: link %s: %s has no heading #%s", l.file, l.line, l.text, path, fragment)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d relative links; the extraction is broken", checked)
	}
}
