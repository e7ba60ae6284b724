package packaging_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"opctl.dev/opctl/pkg/packaging"
	"opctl.dev/opctl/pkg/validate"
)

const fuzzSample = "../../operators/sample"

// FuzzLoad feeds arbitrary manager manifests and opctl.yaml files to
// opctl package. A refusal names a file. What it packages must be a chart
// that helm lint --strict passes and a bundle the operator-framework
// validators pass, and packaging it again gives the same bytes.
func FuzzLoad(f *testing.F) {
	f.Add(readFuzz(f, "config/manager/manager.yaml"), readFuzz(f, packaging.ConfigFile))
	f.Add([]byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: m\n"), []byte("name: x\n"))
	f.Add([]byte("- a\n- b\n"), []byte("operands: {a: {replicas: -3}}\n"))
	f.Add([]byte(""), []byte("icon: ../../../etc/passwd\n"))
	f.Add(readFuzz(f, "config/manager/manager.yaml"), []byte("name: a-name-that-is-forty-characters-long0\nversion: 1.2.3-rc.1\n"))
	// Placeholders in a number and quantities, with defaults and without.
	for _, mem := range []string{"${MEM:=64Mi}", "${MEM}"} {
		f.Add([]byte(strings.NewReplacer("replicas: 1", "replicas: ${REPLICAS:=1}", "cpu: 500m", "cpu: ${CPU:=500m}", "memory: 64Mi", "memory: "+mem).
			Replace(string(readFuzz(f, "config/manager/manager.yaml")))), readFuzz(f, packaging.ConfigFile))
	}
	base := fuzzProject(f)
	f.Fuzz(func(t *testing.T, manager, config []byte) {
		dir := copyFuzzProject(t, base)
		write(t, filepath.Join(dir, "config/manager/manager.yaml"), manager)
		write(t, filepath.Join(dir, packaging.ConfigFile), config)
		checkPackage(t, dir)
	})
}

// FuzzConfig feeds arbitrary opctl.yaml files alone: a refusal names
// opctl.yaml, and what is accepted packages like FuzzLoad requires.
func FuzzConfig(f *testing.F) {
	f.Add(readFuzz(f, packaging.ConfigFile))
	f.Add([]byte("webhooks: {certificates: operator}\n"))
	f.Add([]byte("name: UPPER\n"))
	f.Add([]byte("operands: {kvstores.cache.opctl.dev: {resources: {requests: {storage: 1e-99999999}}}}\n"))
	f.Add([]byte("maintainers: [{name: a, email: b}]\nminKubeVersion: 1.2.3.4\n"))
	base := fuzzProject(f)
	f.Fuzz(func(t *testing.T, config []byte) {
		dir := copyFuzzProject(t, base)
		write(t, filepath.Join(dir, packaging.ConfigFile), config)
		if _, err := packaging.LoadConfig(dir); err != nil && !strings.Contains(err.Error(), packaging.ConfigFile) {
			t.Fatalf("config error does not name %s: %v", packaging.ConfigFile, err)
		}
		checkPackage(t, dir)
	})
}

// checkPackage packages dir twice and holds the outputs to the invariants.
func checkPackage(t *testing.T, dir string) {
	t.Helper()
	out := t.TempDir()
	res, err := packaging.Package(context.Background(), dir, packaging.PackageOptions{Out: out})
	if err != nil {
		if msg := err.Error(); !strings.Contains(msg, dir) && !strings.Contains(msg, packaging.ConfigFile) {
			t.Fatalf("error names no file: %v", err)
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Fatalf("refused, but wrote %d entries to %s", len(entries), out)
		}
		return
	}
	again := t.TempDir()
	if _, err := packaging.Package(context.Background(), dir, packaging.PackageOptions{Out: again}); err != nil {
		t.Fatalf("second run failed: %v", err)
	}
	for _, f := range res.Files {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, _ := os.ReadFile(filepath.Join(again, f))
		if string(a) != string(b) {
			t.Fatalf("%s differs between two runs", f)
		}
	}
	for _, root := range res.Roots {
		path := filepath.Join(out, root)
		var rep *validate.Report
		var gate string
		switch {
		case strings.HasPrefix(root, "charts/"):
			rep, err = validate.ValidateChart(path, validate.Options{})
			gate = "OPC-C000"
		case strings.HasPrefix(root, "bundle/"):
			rep, err = validate.ValidateBundle(path, validate.Options{})
			gate = "OPC-B000"
		default:
			continue
		}
		if err != nil {
			t.Fatalf("%s does not load: %v", root, err)
		}
		for _, fd := range rep.Findings {
			if fd.Check == gate && fd.Severity == validate.SeverityError {
				t.Fatalf("%s: %s %s: %s", root, fd.Check, fd.File, fd.Message)
			}
		}
	}
}

func readFuzz(f *testing.F, rel string) []byte {
	b, err := os.ReadFile(filepath.Join(fuzzSample, rel))
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// fuzzProject copies the sample once per target, without its outputs.
func fuzzProject(f *testing.F) string {
	base := filepath.Join(f.TempDir(), "p")
	if err := os.CopyFS(base, os.DirFS(fuzzSample)); err != nil {
		f.Fatal(err)
	}
	return base
}

func copyFuzzProject(t *testing.T, base string) string {
	dir := filepath.Join(t.TempDir(), "p")
	if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func write(t *testing.T, path string, b []byte) {
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
