package tenancy_test

import (
	"compress/gzip"
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/release"

	"opctl.dev/opctl/pkg/tenancy"
)

// sampleRelease is a deployed release of the sample chart, its manifest
// the chart's templates.
func sampleRelease(b *testing.B) *release.Release {
	b.Helper()
	ch, err := loader.Load(sampleChart(b, "", "0.1.0"))
	if err != nil {
		b.Fatal(err)
	}
	var manifest strings.Builder
	for _, t := range ch.Templates {
		fmt.Fprintf(&manifest, "---\n# Source: %s\n%s\n", t.Name, t.Data)
	}
	rel := &release.Release{Name: "kv", Namespace: "ns", Version: 1, Chart: ch, Manifest: manifest.String(),
		Config: map[string]any{"replicas": 1}, Info: &release.Info{Status: release.StatusDeployed}}
	return rel
}

// BenchmarkRecordEncoding encodes the sample chart's release record at
// Helm's gzip level and at the controller's, and reports each record's
// size: what recordCompression trades.
func BenchmarkRecordEncoding(b *testing.B) {
	rel := sampleRelease(b)
	for _, level := range []int{gzip.BestCompression, gzip.DefaultCompression, gzip.BestSpeed} {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) {
			var size int
			for b.Loop() {
				out, err := tenancy.EncodeReleaseAt(rel, level)
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
			}
			b.ReportMetric(float64(size), "bytes/record")
		})
	}
}

// BenchmarkRecordSummary reads the summary of the sample chart's release
// record, as every reconcile does, beside the reference of inflating and
// scanning the whole record.
func BenchmarkRecordSummary(b *testing.B) {
	rel := sampleRelease(b)
	data, err := tenancy.EncodeReleaseAt(rel, gzip.DefaultCompression)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"whole record", "summary"} {
		read := tenancy.RecordSummaries[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := read(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
