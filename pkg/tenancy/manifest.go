package tenancy

import (
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/releaseutil"
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
	docs := releaseutil.SplitManifests(manifest)
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	sort.Sort(releaseutil.BySplitManifestsOrder(keys))
	out := make([]manifestDoc, 0, len(keys))
	for _, k := range keys {
		var d manifestDoc
		for _, line := range strings.Split(docs[k], "\n") {
			if !strings.HasPrefix(line, "#") {
				break
			}
			d.comments = append(d.comments, line)
		}
		u := &unstructured.Unstructured{}
		if d.err = yaml.Unmarshal([]byte(docs[k]), &u.Object); d.err == nil && len(u.Object) > 0 {
			d.obj = u
		}
		out = append(out, d)
	}
	return out
}
