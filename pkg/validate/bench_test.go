package validate

import (
	"context"
	"testing"
)

// BenchmarkValidateSample validates the sample's bundle and chart, as a CI
// job would on every commit.
func BenchmarkValidateSample(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range []string{sampleBundle, sampleChart} {
			if _, err := Validate(context.Background(), p, KindAuto, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
