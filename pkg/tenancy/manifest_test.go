package tenancy

import (
	"bytes"
	"fmt"
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

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
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
		if got, want := splitManifest(in), helmSplit(in); !slices.Equal(got, want) {
			t.Errorf("splitManifest(%q) = %q, Helm splits %q", in, got, want)
		}
	}
}

func FuzzSplitManifest(f *testing.F) {
	for _, in := range splitCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if got, want := splitManifest(in), helmSplit(in); !slices.Equal(got, want) {
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
			splitManifest(m)
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

var kindCases = []struct {
	doc  string
	kind string
	sure bool
}{
	{"# Source: c/templates/role.yaml\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: r\n", "Role", true},
	{"kind: ConfigMap\r\ndata:\r\n  kind: Role\r\n", "ConfigMap", true},
	{"metadata:\n  name: x\nkind: Deployment   \n", "Deployment", true},
	{"data:\n  a: |\n    kind: Role\nkind: Secret\n", "Secret", true},
	{"apiVersion: v1\nmetadata: {name: x}\n", "", false},
	{`{"kind": "Role", "metadata": {"name": "r"}}`, "", false},
	{"kind: Role\nkind: ConfigMap\n", "", false},
	{"\"kind\": Role\nkind: ConfigMap\n", "", false},
	{"kind: \"Role\"\n", "", false},
	{"kind: Role # a comment\n", "", false},
	{"base: &b {kind: Role}\n<<: *b\nkind: ConfigMap\n", "", false},
	{"kind: !!str Role\n", "", false},
	{"kind: *k\n", "", false},
	{"kind:Role\n", "", false},
	{"metadata: {name: x,\nkind: Role}\n", "", false},
	{"kind:\n", "", false},
	{"--- |\nkind: Role\n", "", false},
	{"rules:\n- kind: Role\n-\n  x: y\nkind: ClusterRole\n", "ClusterRole", true},
	{"- kind: Role\n", "", false},
	{"kind: 00000\n", "", false},
	{"kind: Yes\n", "", false},
	{"kind: role\n", "", false},
	{" 0:\nkind: A0\n", "", false},
	{"- a\nkind: A0\n", "", false},
	{"  # indented comment\nkind: Role\n", "Role", true},
	{"kind: A\n 0", "", false},
	{"kind: A\n\n 0", "", false},
	{"kind: A\n# c\n 0", "", false},
}

func TestDocKind(t *testing.T) {
	for _, tc := range kindCases {
		kind, sure := docKind(tc.doc)
		if kind != tc.kind || sure != tc.sure {
			t.Errorf("docKind(%q) = %q, %v; want %q, %v", tc.doc, kind, sure, tc.kind, tc.sure)
		}
		checkDocKind(t, tc.doc)
	}
	for _, m := range bundleManifests(t) {
		b := m.data
		if _, sure := docKind(string(b)); !sure {
			t.Errorf("docKind of %s: not sure", m.path)
		}
		checkDocKind(t, string(b))
	}
}

// checkDocKind: when docKind is sure of a document's kind, the document
// parses to no object or to an object of that kind.
func checkDocKind(t *testing.T, doc string) {
	t.Helper()
	kind, sure := docKind(doc)
	if !sure {
		return
	}
	if d := parseDoc(doc); d.err == nil && d.obj != nil && d.obj.GetKind() != kind {
		t.Errorf("docKind(%q) is sure of %q; the document parses as a %q", doc, kind, d.obj.GetKind())
	}
}

func FuzzDocKind(f *testing.F) {
	for _, tc := range kindCases {
		f.Add(tc.doc)
	}
	f.Fuzz(checkDocKind)
}

// BenchmarkDriftObjects reads the drift objects of a manifest of the
// bundles' objects and, as the reference, parses every document of it
// (what driftObjects did before it skipped the kinds it does not keep).
func BenchmarkDriftObjects(b *testing.B) {
	var manifest strings.Builder
	for _, m := range bundleManifests(b) {
		fmt.Fprintf(&manifest, "---\n# Source: %s\n%s", filepath.Base(m.path), m.data)
	}
	// A release's own objects: a Role and a ServiceAccount, in namespace ns.
	manifest.WriteString("---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: r\nrules: []\n")
	m := manifest.String()
	t := &tenancyv1.Tenant{Spec: tenancyv1.TenantSpec{Namespaces: []string{"ns"}}}
	b.Run("driftObjects", func(b *testing.B) {
		for b.Loop() {
			if objs := driftObjects(m, "ns", t, map[string]string{LabelTenant: "t"}); len(objs) != 2 {
				b.Fatalf("%d drift objects, want 2", len(objs))
			}
		}
	})
	b.Run("parse-all", func(b *testing.B) {
		for b.Loop() {
			manifestDocs(m)
		}
	})
}

type manifestFile struct {
	path string
	data []byte
}

// bundleManifests are the bundles' manifests: real objects (CRDs, a CSV,
// RBAC, alerts, a dashboard) for the manifest tests and benchmarks.
func bundleManifests(tb testing.TB) []manifestFile {
	tb.Helper()
	files, err := filepath.Glob("../../bundle/*/manifests/*.yaml")
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
