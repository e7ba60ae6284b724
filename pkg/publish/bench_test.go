package publish

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"opctl.dev/opctl/internal/testregistry"
)

// BenchmarkPublish publishes the sample (bundle image, catalog image and
// chart) to a local registry: "new" pushes everything to a fresh
// repository path each time, "unchanged" republishes the same version.
func BenchmarkPublish(b *testing.B) {
	ctx := context.Background()
	reg := testregistry.Start(b)
	out := packageSample(b, "0.1.0", "opctl/kvstore-operator:0.1.0")
	n := 0 // fresh paths across -count runs
	b.Run("new", func(b *testing.B) {
		dir := b.TempDir()
		b.ReportAllocs()
		for b.Loop() {
			n++
			opts := Options{Registry: fmt.Sprintf("%s/bench%d", reg.Host, n), CatalogDir: filepath.Join(dir, fmt.Sprint(n))}
			res, err := Publish(ctx, out, opts)
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Artifacts) != 3 || res.Artifacts[0].Action != ActionPushed {
				b.Fatalf("artifacts %+v", res.Artifacts)
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		opts := Options{Registry: reg.Host + "/same", CatalogDir: filepath.Join(b.TempDir(), "catalog")}
		if _, err := Publish(ctx, out, opts); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			res, err := Publish(ctx, out, opts)
			if err != nil {
				b.Fatal(err)
			}
			if !res.Unchanged() {
				b.Fatalf("republish changed something: %+v", res)
			}
		}
	})
}
