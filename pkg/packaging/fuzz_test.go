package packaging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// FuzzLoad feeds arbitrary manager manifests and opctl.yaml files to the
// project loader: it may refuse them, but it must not panic, and what it
// accepts must package into a chart and a bundle or fail with an error.
func FuzzLoad(f *testing.F) {
	manager := readFile(f, filepath.Join(sampleDir, "config/manager/manager.yaml"))
	config := readFile(f, filepath.Join(sampleDir, ConfigFile))
	f.Add(manager, config)
	f.Add([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: m\n"), []byte("name: x\n"))
	f.Add([]byte("- a\n- b\n"), []byte("operands: {a: {replicas: -3}}\n"))
	f.Add([]byte(""), []byte("icon: ../../../etc/passwd\n"))
	base := f.TempDir()
	if err := os.CopyFS(filepath.Join(base, "p"), os.DirFS(sampleDir)); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, manager, config []byte) {
		dir := filepath.Join(t.TempDir(), "p")
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(base, "p"))); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config/manager/manager.yaml"), manager, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ConfigFile), config, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Load(dir, Options{})
		if err != nil {
			return
		}
		_, _, _ = p.Chart(ChartOptions{})
		_, _, _ = p.Bundle(BundleOptions{})
	})
}

// FuzzCSV builds CSVs from arbitrary metadata and checks the result is
// YAML that decodes back to the same name and version.
func FuzzCSV(f *testing.F) {
	p, err := Load(sampleDir, Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("KVStore Operator", "summary", "Database, Storage", "Seamless Upgrades", "1.30.0", "0.1.0")
	f.Add("", "", "", "", "", "0.0.1-rc.1+build.5")
	f.Add("x: y", "- list", "{", "\"", "\n\n", "99999999999999999999.0.0")
	f.Fuzz(func(t *testing.T, display, summary, categories, capabilities, minKube, version string) {
		q := *p
		q.Config.DisplayName, q.Config.Summary, q.Config.Capabilities, q.Config.MinKubeVersion = display, summary, capabilities, minKube
		q.Config.Categories = strings.Split(categories, ",")
		q.Config.Icon = ""
		q.Version = version
		csv, err := q.CSV(BundleOptions{}, nil, nil)
		if err != nil {
			return
		}
		b, err := yaml.Marshal(csv)
		if err != nil {
			t.Fatalf("CSV does not marshal: %v", err)
		}
		var back struct {
			Metadata struct{ Name string }
			Spec     struct{ Version string }
		}
		if err := yaml.Unmarshal(b, &back); err != nil {
			t.Fatalf("CSV YAML does not decode: %v\n%s", err, b)
		}
		if back.Metadata.Name != csv.Name || back.Spec.Version != csv.Spec.Version.String() {
			t.Fatalf("round trip changed name/version: %q %q", back.Metadata.Name, back.Spec.Version)
		}
	})
}
