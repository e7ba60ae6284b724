package validate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzChartArchive feeds arbitrary bytes as a chart .tgz.
func FuzzChartArchive(f *testing.F) {
	f.Add([]byte{0x1f, 0x8b, 0x08, 0x00})
	f.Add([]byte("not gzip"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "c.tgz")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		checkValidate(t, p, KindAuto)
	})
}

// FuzzBundleManifest writes arbitrary bytes as the CSV of the sample
// bundle.
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
		checkValidate(t, dir, KindBundle)
	})
}

// FuzzCatalog writes arbitrary bytes as a file-based catalog.
func FuzzCatalog(f *testing.F) {
	f.Add([]byte(`{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v0.2.0","replaces":"p.v0.1.0"},{"name":"p.v0.1.0"}]}
{"schema":"olm.bundle","package":"p","name":"p.v0.1.0","image":"r/p:0.1.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"0.1.0"}}]}
{"schema":"olm.bundle","package":"p","name":"p.v0.2.0","image":"r/p:0.2.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"0.2.0"}}]}
`))
	f.Add([]byte("schema: olm.package\nname: p\ndefaultChannel: none\n---\nschema: olm.channel\npackage: p\nname: a\nentries: [{name: x, replaces: x}]\n"))
	f.Add([]byte(`{"schema":"olm.channel","package":"q","name":"c","entries":[{"name":"a","skipRange":">=0.0.0 <9"},{"name":"b","skips":["a","b"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "catalog")
		if err := os.MkdirAll(filepath.Join(dir, "p"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "p", "catalog.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		checkValidate(t, dir, KindCatalog)
	})
}

// checkValidate validates path twice. A refusal names the path. Every
// finding is of a registered check at its registered severity, names a
// file inside path when it names one, and the two reports are the same.
func checkValidate(t *testing.T, path, kind string) {
	t.Helper()
	reports, err := Validate(context.Background(), path, kind, Options{Suite: SuiteAll})
	if err != nil {
		if !strings.Contains(err.Error(), path) {
			t.Fatalf("error does not name %s: %v", path, err)
		}
		return
	}
	var findings []Finding
	for _, r := range reports {
		findings = append(findings, r.Findings...)
	}
	for _, fd := range findings {
		if _, err := registered(fd); err != nil {
			t.Fatal(err)
		}
		if fd.File != "" && (filepath.IsAbs(fd.File) || strings.HasPrefix(filepath.Clean(fd.File), "..")) {
			t.Fatalf("finding names a file outside %s: %q", path, fd.File)
		}
	}
	again, err := Validate(context.Background(), path, kind, Options{Suite: SuiteAll})
	if err != nil {
		t.Fatalf("second run failed: %v", err)
	}
	a, _ := json.Marshal(reports)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Fatalf("two runs differ:\n%s\n%s", a, b)
	}
}
