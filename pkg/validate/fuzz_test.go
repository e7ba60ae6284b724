package validate

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzChartArchive feeds arbitrary bytes as a chart .tgz: refused or
// validated, never a panic.
func FuzzChartArchive(f *testing.F) {
	f.Add([]byte{0x1f, 0x8b, 0x08, 0x00})
	f.Add([]byte("not gzip"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "c.tgz")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = Validate(context.Background(), p, KindAuto, Options{})
	})
}

// FuzzBundleManifest writes arbitrary bytes as the CSV of the sample
// bundle: findings or an error, never a panic.
func FuzzBundleManifest(f *testing.F) {
	csv, err := os.ReadFile(filepath.Join(sampleBundle, "manifests", "sample-operator.clusterserviceversion.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(csv)
	f.Add([]byte("apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: x\n  annotations:\n    alm-examples: '[{}]'\n"))
	f.Add([]byte("kind: ClusterServiceVersion\nspec:\n  install:\n    spec:\n      deployments: [{}]\n"))
	base := f.TempDir()
	if err := os.CopyFS(filepath.Join(base, "b"), os.DirFS(sampleBundle)); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "b")
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(base, "b"))); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "manifests", "sample-operator.clusterserviceversion.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = Validate(context.Background(), dir, KindBundle, Options{})
	})
}
