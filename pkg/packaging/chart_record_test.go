package packaging

import (
	"compress/gzip"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/release"

	"opctl.dev/opctl/internal/testproject"
)

// withBigCRDs is the sample with n extra CRDs of size bytes each.
func withBigCRDs(t *testing.T, n, size int) string {
	t.Helper()
	dir := copyProject(t, sampleDir)
	testproject.WithBigCRDs(t, dir, "big.example.com", n, size)
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
		{"CRDs that fit in no one record go to several CRD charts", 5, 800 << 10, crdsPacked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := withBigCRDs(t, tt.n, tt.size)
			out, res := packageTo(t, dir, PackageOptions{})
			chartDir := filepath.Join(out, "charts", "sample-operator")
			_, crdChart := os.Stat(filepath.Join(out, "charts", "sample-operator-crds"))
			_, crdChart2 := os.Stat(filepath.Join(out, "charts", "sample-operator-crds-2"))
			_, crdsDir := os.Stat(filepath.Join(chartDir, "crds"))
			got := CRDsTemplated
			switch {
			case crdChart == nil && crdChart2 == nil:
				got = crdsPacked
			case crdChart == nil:
				got = CRDsSeparateChart
			case crdsDir == nil:
				got = CRDsDir
			}
			if got != tt.want {
				t.Fatalf("layout %s, want %s (warnings %q)", got, tt.want, res.Warnings)
			}
			said := slices.ContainsFunc(res.Warnings, func(w string) bool {
				return (strings.Contains(w, "--crds "+tt.want+" instead") || tt.want == crdsPacked && strings.Contains(w, "charts of their own (charts/sample-operator-crds, charts/sample-operator-crds-2")) && strings.Contains(w, "would fail")
			})
			if said != (tt.want != CRDsTemplated) {
				t.Errorf("warnings %q: the layout change must be said exactly when it happens", res.Warnings)
			}
			for _, root := range res.Roots {
				if !strings.HasPrefix(root, "charts/") {
					continue
				}
				files := readChart(t, out, root)
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

// A layout asked for with --crds whose release record would not fit is
// refused, naming the layout that would: helm install would fail.
func TestReleaseRecordTooLargeForTheLayoutAsked(t *testing.T) {
	dir := withBigCRDs(t, 2, 1000<<10)
	_, err := Package(t.Context(), dir, PackageOptions{Out: t.TempDir(), PerTarget: map[string]TargetOptions{"chart": &ChartOptions{CRDs: CRDsTemplated}}})
	if err == nil || !containsAll(err.Error(), []string{"charts/sample-operator: its Helm release record would be", "so helm install would fail: use --crds crds-dir"}) {
		t.Fatalf("error %v", err)
	}
}

// CRDs too large for any layout are refused, naming the sizes: helm
// install would fail. CRDs of documentation-like text fit a chart each
// (TestReleaseRecordChoosesALayout); one of text that compresses poorly
// fits no record even alone.
func TestReleaseRecordTooLargeForEveryLayout(t *testing.T) {
	dir := withBigCRDs(t, 2, 1000<<10)
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString(strings.Replace(testproject.BigCRD("bigsz", "big.example.com", 0), "kind: Bigbigsz", "kind: Bigsz", 1))
	for i := 0; b.Len() < 1400<<10; i++ {
		fmt.Fprintf(&b, "              field%d:\n                type: string\n                description: \"", i)
		for range 200 {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		b.WriteString("\"\n")
	}
	mustWrite(t, filepath.Join(dir, "config", "crd", "bases", "bigsz.yaml"), b.String())
	testproject.Edit(t, filepath.Join(dir, "config", "crd", "kustomization.yaml"), func(s string) string {
		return strings.Replace(s, "resources:\n", "resources:\n- bases/bigsz.yaml\n", 1)
	})
	_, err := Package(t.Context(), dir, PackageOptions{Out: t.TempDir()})
	if err == nil || !containsAll(err.Error(), []string{"charts/sample-operator", "--crds templated a Helm release record would be", "--crds crds-dir", "CustomResourceDefinition bigsz.big.example.com alone would make a Helm release record of", "in every layout", "maxDescLen"}) {
		t.Fatalf("error %v", err)
	}
}

// The record opctl measures without Helm's sort is Helm's own: at the best
// level within half a percent of the dry-run install's record, and at the
// default level never more than half a percent under it, in each layout
// of CRDs around the cap.
func TestRecordModelIsHelmsRecord(t *testing.T) {
	type project struct{ src, chart string }
	// The webhook fixture's chart generates its certificate (genCA): the
	// model renders it with stand-ins of the same size (withStandInCerts).
	for _, pr := range []project{{sampleDir, "sample-operator"}, {webhookDir, "hook-operator"}} {
		for _, size := range []int{300 << 10, 700 << 10} {
			dir := copyProject(t, pr.src)
			testproject.WithBigCRDs(t, dir, "big.example.com", 2, size)
			for _, mode := range []string{CRDsTemplated, CRDsDir} {
				t.Run(fmt.Sprintf("%s %d KiB %s", pr.chart, size>>10, mode), func(t *testing.T) {
					p, err := Load(dir, Options{})
					if err != nil {
						t.Fatal(err)
					}
					files, _, err := p.chart(ChartOptions{CRDs: mode})
					if err != nil {
						t.Fatal(err)
					}
					root := chartsDir + "/" + pr.chart + "/"
					if pr.chart == "hook-operator" && !strings.Contains(string(files[root+"templates/webhooks.yaml"]), "genCA") {
						t.Fatalf("%stemplates/webhooks.yaml does not generate its certificate", root)
					}
					ch, err := loader.LoadFiles(chartFiles(files, root))
					if err != nil {
						t.Fatal(err)
					}
					exact, err := helmRecordBytes(ch, root)
					if err != nil {
						t.Fatal(err)
					}
					manifest, err := new(recorder).manifest(ch, root)
					if err != nil {
						t.Fatal(err)
					}
					model := &release.Release{Name: recordRelease, Namespace: "default", Chart: ch, Config: map[string]any{},
						Info: &release.Info{Status: release.StatusDeployed, Description: "Install complete"}, Manifest: manifest, Version: 1}
					best, err := encodedRecordBytes(model, gzip.BestCompression)
					if err != nil {
						t.Fatal(err)
					}
					fast, err := encodedRecordBytes(model, gzip.DefaultCompression)
					if err != nil {
						t.Fatal(err)
					}
					if diff := math.Abs(float64(best-exact)) / float64(exact); diff > 0.005 {
						t.Errorf("model %d bytes, Helm's record %d: %.2f%% apart", best, exact, 100*diff)
					}
					if float64(fast) < float64(exact)*0.995 {
						t.Errorf("at the default level %d bytes, more than half a percent under Helm's record of %d (recorder.size measures again from a percent under the cap)", fast, exact)
					}
				})
			}
		}
	}
}

// A chart that requires its project's placeholders is measured with them
// set when its CRDs are large enough to measure (cluster-api-provider-aws
// failed to package: the record's render required them).
func TestRecordOfPlaceholderChart(t *testing.T) {
	dir := copyProject(t, "testdata/placeholders")
	testproject.WithBigCRDs(t, dir, "big.example.com", 2, 1000<<10)
	if _, err := Package(t.Context(), dir, PackageOptions{Out: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
}
