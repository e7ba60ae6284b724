package validate

import (
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"
)

// wholeHeader is headerOf's answer by parsing the whole document.
func wholeHeader(b []byte) (kind, name string) {
	var h header
	_ = yaml.Unmarshal(b, &h)
	return h.Kind, h.Metadata.Name
}

func TestHeaderOf(t *testing.T) {
	tests := []struct {
		name, doc        string
		kind, objectName string
		partial          bool // headerEntries stands for the document
	}{
		{"plain", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: y\n", "ConfigMap", "a", true},
		{"spec first", "spec:\n  kind: Inner\n  metadata:\n    name: inner\nmetadata:\n  labels:\n    x: y\n  name: b\nkind: Service\n", "Service", "b", true},
		{"quoted values", "kind: 'Service'\nmetadata:\n  name: \"c d\"\n", "Service", "c d", true},
		{"comments and blank lines", "# head\n\nkind: Secret # trailing\nmetadata:\n# inside\n  name: e\n", "Secret", "e", true},
		{"compact sequence in a dropped entry", "items:\n- kind: Wrong\nkind: List\nmetadata:\n  name: f\n", "List", "f", true},
		{"leading marker", "---\nkind: Role\nmetadata:\n  name: g\n", "Role", "g", true},
		{"second document ignored", "kind: Role\nmetadata:\n  name: h\n---\nkind: Other\nmetadata:\n  name: i\n", "Role", "h", true},
		{"crlf", "kind: Role\r\nmetadata:\r\n  name: j\r\n", "Role", "j", true},
		{"flow metadata", "kind: Role\nmetadata: {name: k}\n", "Role", "k", true},
		{"json", `{"kind":"Role","metadata":{"name":"l"}}`, "Role", "l", false},
		{"quoted key", "\"kind\": Role\nmetadata:\n  name: m\n", "Role", "m", false},
		{"alias to a dropped anchor", "base: &m\n  name: n\nkind: Role\nmetadata: *m\n", "Role", "n", true},
		{"merge key", "<<: {kind: Role}\nmetadata:\n  name: o\n", "Role", "o", false},
		{"no metadata", "kind: Role\n", "Role", "", false},
		{"duplicate kind", "kind: A\nkind: B\nmetadata:\n  name: p\n", "", "", true},
		{"duplicate elsewhere", "kind: A\nmetadata:\n  name: q\nspec: 1\nspec: 2\n", "A", "q", true},
		{"not yaml", "kind: [\n", "", "", false},
		{"empty", "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, name := headerOf([]byte(tt.doc))
			if kind != tt.kind || name != tt.objectName {
				t.Errorf("headerOf = %q, %q; want %q, %q", kind, name, tt.kind, tt.objectName)
			}
			if _, ok := headerEntries([]byte(tt.doc)); ok != tt.partial {
				t.Errorf("headerEntries ok = %v, want %v", ok, tt.partial)
			}
		})
	}
}

// TestHeaderOfShippedBundles checks headerOf against parsing the whole
// document on every manifest of the bundles in this repository.
func TestHeaderOfShippedBundles(t *testing.T) {
	files, err := filepath.Glob("../../bundle/*/manifests/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundle manifests found: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := headerEntries(b); !ok {
			t.Errorf("%s: headerEntries does not stand for the document", f)
		}
		gk, gn := headerOf(b)
		wk, wn := wholeHeader(b)
		if gk != wk || gn != wn || gk == "" || gn == "" {
			t.Errorf("%s: headerOf = %q, %q; whole document %q, %q", f, gk, gn, wk, wn)
		}
	}
}
