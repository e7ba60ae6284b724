package tenancy

import (
	"slices"
	"sort"
	"testing"

	"helm.sh/helm/v3/pkg/releaseutil"
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
