package guard

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// helmSplit is releaseutil.SplitManifests in document order.
func helmSplit(manifest string) []string {
	docs := releaseutil.SplitManifests(manifest)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, docs[k])
	}
	return out
}

var splitCases = []string{
	"",
	"---",
	"a: 1",
	"---\n# Source: c/templates/a.yaml\na: 1\n---\n# Source: c/templates/b.yaml\nb: 2\n",
	"a: 1\n---\nb: 2",
	"a: 1\n \t\n---   \n\n  b: 2",
	"---\n---\na: 1",
	"a: 1\n---\n---\nb: 2",
	"a: |\n  text\n  ---\n  more\nb: 2",
	"a: 1\n---b: 2",
	"a: 1\n--- # comment\nb: 2",
	"a: 1\n--\n-\n---",
	"\r\n---\r\na: 1\r\n---\r\n",
	"x---\ny",
	"a\n\n\n---\n\n\n",
	"--- ---\n---",
}

// splitManifest sees the documents Helm's own splitter sees.
func TestSplitManifest(t *testing.T) {
	for _, in := range splitCases {
		if got, want := SplitManifest(in), helmSplit(in); !slices.Equal(got, want) {
			t.Errorf("splitManifest(%q) = %q, Helm splits %q", in, got, want)
		}
	}
}

func FuzzSplitManifest(f *testing.F) {
	for _, in := range splitCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if got, want := SplitManifest(in), helmSplit(in); !slices.Equal(got, want) {
			t.Errorf("splitManifest(%q) = %q, Helm splits %q", in, got, want)
		}
	})
}

// BenchmarkSplitManifest compares the splitter with Helm's on a rendered
// manifest of the sample chart's size.
func BenchmarkSplitManifest(b *testing.B) {
	var m string
	for range 20 {
		m += "---\n# Source: kv/templates/x.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: |\n    " + string(make([]byte, 400)) + "\n"
	}
	b.Run("opctl", func(b *testing.B) {
		for b.Loop() {
			SplitManifest(m)
		}
	})
	b.Run("helm", func(b *testing.B) {
		for b.Loop() {
			releaseutil.SplitManifests(m)
		}
	})
}

var yamlCases = []string{
	"a: 1",
	"kind: ConfigMap\ndata:\n  f: 1.0\n  g: 1e6\n  h: 1e21\n  i: 0.5\n  j: 1e-7\n  k: 1e20\n  l: -0.0\n  m: 12345678901234567890\n  n: 9223372036854775807\n",
	"s:\n  - 'true'\n  - '0755'\n  - '1e3'\n  - 'null'\n  - ''\n  - '~'\n  - 'yes'\n  - '<&>'\n  - \"\\u2028\"\n  - \"caf\\u00e9\"\n",
	"multi: |\n  line one\n  line two\n\n  after a blank\nfolded: >\n  a b\n  c\n",
	"empty: {}\nlist: []\nnothing: null\nnested: {b: [1, 2.5, {c: d}], a: [[], {}]}\n",
	"keys: {b: 1, a10: 2, a9: 3, A: 4, '1': 5, '10': 6, '2': 7}\n",
	"long: " + strings.Repeat("word ", 40) + "\n",
	"spec:\n  template:\n    metadata:\n      annotations: {\"kubectl.kubernetes.io/default-container\": manager}\n",
}

// checkManifestYAML: manifestYAML emits what sigs.k8s.io/yaml.Marshal
// emits for the object sigs.k8s.io/yaml.Unmarshal reads from doc, when
// that is an object manifestDocs keeps (not empty): the same bytes when
// exact, else the same object read back. Both order map keys with
// go-yaml's sort, whose order for some sets of keys that mix digits and
// letters (20, 110000, 1C0700010) depends on the map's iteration order, so
// fuzzed input is compared as objects.
func checkManifestYAML(t *testing.T, doc []byte, exact bool) {
	t.Helper()
	var obj map[string]any
	if yaml.Unmarshal(doc, &obj) != nil || len(obj) == 0 {
		return
	}
	want, wantErr := yaml.Marshal(obj)
	got, err := manifestYAML(runtime.DeepCopyJSON(obj))
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("manifestYAML error %v, sigs.k8s.io/yaml %v, for %q", err, wantErr, doc)
	}
	if exact {
		if !bytes.Equal(got, want) {
			t.Errorf("manifestYAML of %q:\n%s\nsigs.k8s.io/yaml:\n%s", doc, got, want)
		}
		return
	}
	var gotObj, wantObj map[string]any
	if err := yaml.Unmarshal(got, &gotObj); err != nil {
		t.Fatalf("reading back manifestYAML of %q: %v", doc, err)
	}
	if err := yaml.Unmarshal(want, &wantObj); err != nil {
		t.Fatalf("reading back sigs.k8s.io/yaml of %q: %v", doc, err)
	}
	if !reflect.DeepEqual(gotObj, wantObj) {
		t.Errorf("manifestYAML of %q reads back as %v, sigs.k8s.io/yaml's as %v", doc, gotObj, wantObj)
	}
}

func TestManifestYAML(t *testing.T) {
	for _, in := range yamlCases {
		checkManifestYAML(t, []byte(in), true)
	}
	// Real objects: the bundles' manifests (CRDs, a CSV, RBAC, alerts).
	for _, m := range bundleManifests(t) {
		b := m.data
		checkManifestYAML(t, b, true)
	}
}

func FuzzManifestYAML(f *testing.F) {
	for _, in := range yamlCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) { checkManifestYAML(t, []byte(in), false) })
}

// BenchmarkManifestYAML emits the bundles' manifests with manifestYAML
// and, as the reference, with sigs.k8s.io/yaml.Marshal.
func BenchmarkManifestYAML(b *testing.B) {
	var objs []map[string]any
	for _, m := range bundleManifests(b) {
		var obj map[string]any
		if err := yaml.Unmarshal(m.data, &obj); err != nil {
			b.Fatal(err)
		}
		objs = append(objs, obj)
	}
	for _, enc := range []struct {
		name string
		fn   func(map[string]any) ([]byte, error)
	}{{"manifestYAML", manifestYAML}, {"sigs.k8s.io/yaml", func(o map[string]any) ([]byte, error) { return yaml.Marshal(o) }}} {
		b.Run(enc.name, func(b *testing.B) {
			for b.Loop() {
				for _, o := range objs {
					if _, err := enc.fn(o); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

type manifestFile struct {
	path string
	data []byte
}

// bundleManifests are the bundles' manifests: real objects (CRDs, a CSV,
// RBAC, alerts, a dashboard) for the manifest tests and benchmarks.
func bundleManifests(tb testing.TB) []manifestFile {
	tb.Helper()
	files, err := filepath.Glob("../../../../bundle/*/manifests/*.yaml")
	if err != nil || len(files) == 0 {
		tb.Fatalf("no bundle manifests: %v", err)
	}
	out := make([]manifestFile, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, manifestFile{f, data})
	}
	return out
}
