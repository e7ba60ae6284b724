package registryv1

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadBundleDir reads a bundle directory as opctl package writes it, each
// object with its file, and says what is wrong with one it cannot read.
func TestReadBundleDir(t *testing.T) {
	b, err := ReadBundleDir("../../../../bundle/sample-operator")
	if err != nil {
		t.Fatal(err)
	}
	if b.Package != "sample-operator" || len(b.Objects) != len(sampleBundle(t)) ||
		b.Files["ClusterServiceVersion/sample-operator.v0.1.0"] != "manifests/sample-operator.clusterserviceversion.yaml" ||
		b.Files["CustomResourceDefinition/kvstores.kv.opctl.dev"] != "manifests/kv.opctl.dev_kvstores.yaml" {
		t.Errorf("package %q, %d objects, files %v", b.Package, len(b.Objects), b.Files)
	}
	csv := "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: {name: x.v1.0.0}\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no annotations", map[string]string{"manifests/x.yaml": csv}, "is not a registry+v1 bundle"},
		{"no package", map[string]string{"metadata/annotations.yaml": "annotations: {}\n", "manifests/x.yaml": csv}, "annotations.operators.operatorframework.io.bundle.package.v1 is not set"},
		{"another media type", map[string]string{"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: plain+v0\n  operators.operatorframework.io.bundle.package.v1: x\n",
			"manifests/x.yaml": csv}, `is "plain+v0": only registry+v1 bundles are read`},
		{"no manifests", map[string]string{"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.package.v1: x\n", "manifests/README": "x"}, "has no YAML or JSON files under manifests/"},
		{"a broken manifest", map[string]string{"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.package.v1: x\n", "manifests/x.yaml": "kind: [\n"}, "manifests/x.yaml: bundle x: reading an object"},
	} {
		dir := t.TempDir()
		for name, data := range tc.files {
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ReadBundleDir(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// LoadCatalogDir reads a catalog directory's YAML and JSON files into one
// catalog.
func TestLoadCatalogDir(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"kv/package.yaml":  "schema: olm.package\nname: kv\ndefaultChannel: stable\n",
		"kv/channels.json": `{"schema": "olm.channel", "package": "kv", "name": "stable", "entries": [{"name": "kv.v0.1.0"}]}`,
		"kv/notes.txt":     "not a catalog file",
	} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := LoadCatalogDir(dir)
	if err != nil || len(cfg.Packages) != 1 || len(cfg.Channels) != 1 || cfg.Channels[0].Entries[0].Name != "kv.v0.1.0" {
		t.Fatalf("%+v, %v", cfg, err)
	}
	if _, err := LoadCatalogDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "has no YAML or JSON files") {
		t.Errorf("an empty directory: %v", err)
	}
}
