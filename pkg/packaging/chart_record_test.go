package packaging

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bigCRD is a CRD of about size bytes whose descriptions are random words,
// which compress about as well as real API documentation.
func bigCRD(plural string, size int) string {
	words := strings.Fields("the of a to replica volume storage field value name set when is not used by for this that pod node key secret spec status condition time count default limit request version resource object namespace label selector port image container policy backup restore schedule retention")
	r := rand.New(rand.NewPCG(1, uint64(len(plural))))
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s.big.example.com\nspec:\n  group: big.example.com\n  names:\n    kind: Big%s\n    listKind: Big%sList\n    plural: %s\n    singular: big%s\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n", plural, plural, plural, plural, plural)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "              field%d:\n                type: string\n                description: \"", i)
		for range 40 {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteString("\"\n")
	}
	return b.String()
}

// withBigCRDs is the sample with n extra CRDs of size bytes each.
func withBigCRDs(t *testing.T, n, size int) string {
	t.Helper()
	dir := copyProject(t, sampleDir)
	kust := filepath.Join(dir, "config/crd/kustomization.yaml")
	for i := range n {
		plural := fmt.Sprintf("bigs%c", 'a'+i)
		mustWrite(t, filepath.Join(dir, "config/crd/bases", plural+".yaml"), bigCRD(plural, size))
		b := strings.Replace(string(readFile(t, kust)), "resources:\n", "resources:\n- bases/"+plural+".yaml\n", 1)
		mustWrite(t, kust, b)
	}
	return dir
}

// A chart whose release record would not fit Helm's Secret moves its CRDs
// to a layout whose records fit, and says so; the measure is Helm's own
// encoding of the release.
func TestReleaseRecordChoosesALayout(t *testing.T) {
	tests := []struct {
		name    string
		n, size int
		want    string // the layout chosen
	}{
		{"small CRDs stay templated", 1, 100 << 10, CRDsTemplated},
		{"CRDs that fit only once go to crds/", 2, 1000 << 10, CRDsDir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := withBigCRDs(t, tt.n, tt.size)
			out, res := packageTo(t, dir, PackageOptions{})
			chartDir := filepath.Join(out, "charts", "sample-operator")
			_, crdChart := os.Stat(filepath.Join(out, "charts", "sample-operator-crds"))
			_, crdsDir := os.Stat(filepath.Join(chartDir, "crds"))
			got := CRDsTemplated
			switch {
			case crdChart == nil:
				got = CRDsSeparateChart
			case crdsDir == nil:
				got = CRDsDir
			}
			if got != tt.want {
				t.Fatalf("layout %s, want %s (warnings %q)", got, tt.want, res.Warnings)
			}
			said := slices.ContainsFunc(res.Warnings, func(w string) bool {
				return strings.Contains(w, "--crds "+tt.want+" instead") && strings.Contains(w, "would fail")
			})
			if said != (tt.want != CRDsTemplated) {
				t.Errorf("warnings %q: the layout change must be said exactly when it happens", res.Warnings)
			}
			for _, root := range res.Roots {
				if !strings.HasPrefix(root, "charts/") {
					continue
				}
				files := Files{}
				_ = filepath.WalkDir(filepath.Join(out, root), func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						rel, _ := filepath.Rel(out, p)
						files[filepath.ToSlash(rel)] = readFile(t, p)
					}
					return err
				})
				n, err := releaseRecordBytes(files, root+"/")
				if err != nil {
					t.Fatal(err)
				}
				if n > MaxReleaseRecordBytes {
					t.Errorf("%s: release record %d bytes, over %d", root, n, MaxReleaseRecordBytes)
				}
				// The estimate that spares the render must not undercount.
				if e := recordEstimate(files, root+"/"); e < n {
					t.Errorf("%s: estimate %d bytes, under the record's %d", root, e, n)
				}
			}
		})
	}
}

// CRDs too large for any layout are refused, naming the sizes: helm
// install would fail.
func TestReleaseRecordTooLargeForEveryLayout(t *testing.T) {
	dir := withBigCRDs(t, 4, 1400<<10)
	_, err := Package(t.Context(), dir, PackageOptions{Out: t.TempDir()})
	if err == nil || !containsAll(err.Error(), []string{"charts/sample-operator", "--crds templated a Helm release record would be", "--crds crds-dir", "in every layout", "maxDescLen"}) {
		t.Fatalf("error %v", err)
	}
}
