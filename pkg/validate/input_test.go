package validate

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

// tgz writes a gzip tar with the given entries (name → content, or a
// link target when the name starts with "link:").
func tgz(t *testing.T, entries [][2]string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chart.tgz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e[0], Mode: 0o644, Size: int64(len(e[1])), Typeflag: tar.TypeReg}
		if name, ok := strings.CutPrefix(e[0], "link:"); ok {
			h = &tar.Header{Name: name, Linkname: e[1], Typeflag: tar.TypeSymlink, Mode: 0o777}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(e[1])); err != nil {
				t.Fatal(err)
			}
		}
	}
	tw.Close()
	gz.Close()
	f.Close()
	return path
}

const chartYAML = "apiVersion: v2\nname: c\nversion: 0.1.0\n"

func TestBadInputIsRefused(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) string
		want  string
	}{
		{"missing path", func(t *testing.T) string { return "/nonexistent/x" }, "cannot read /nonexistent/x"},
		{"archive with a parent path", func(t *testing.T) string {
			return tgz(t, [][2]string{{"c/Chart.yaml", chartYAML}, {"c/../../evil", "x"}})
		}, "leaves the archive root"},
		{"archive with a symlink", func(t *testing.T) string {
			return tgz(t, [][2]string{{"c/Chart.yaml", chartYAML}, {"link:c/templates/x.yaml", "/etc/passwd"}})
		}, "charts carry no links"},
		{"archive with a huge file", func(t *testing.T) string {
			return tgz(t, [][2]string{{"c/Chart.yaml", chartYAML}, {"c/big", strings.Repeat("x", MaxFileBytes+1)}})
		}, "over the 10 MiB limit"},
		{"not an archive", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "x.tgz")
			os.WriteFile(p, []byte("plain"), 0o644)
			return p
		}, "not a gzip chart archive"},
		{"directory with a symlink outside", func(t *testing.T) string {
			dir := copyDir(t, "testdata/badchart")
			if err := os.Symlink("/etc", filepath.Join(dir, "templates", "etc")); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "outside"},
		{"directory with a huge file", func(t *testing.T) string {
			dir := copyDir(t, "testdata/badchart")
			os.WriteFile(filepath.Join(dir, "big.txt"), make([]byte, MaxFileBytes+1), 0o644)
			return dir
		}, "over the 10 MiB limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Validate(context.Background(), tt.setup(t), KindAuto, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// A project's tool binaries, build output and git data are not read, so
// files there over the limit do not refuse the project; one the packager
// reads still does.
func TestProjectSkipsWhatPackageNeverReads(t *testing.T) {
	project := func(t *testing.T) string {
		dir := copyDir(t, "../../operators/sample")
		for _, f := range []string{"bin/manager", ".git/objects/pack/pack-1.pack", "dist/opctl"} {
			p := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, make([]byte, MaxFileBytes+1), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("/usr/bin/env", filepath.Join(dir, "bin", "kustomize")); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dir := project(t)
	if _, err := Validate(context.Background(), dir, KindAuto, Options{}); err != nil {
		t.Errorf("a project with large files in bin/, dist/ and .git/: %v", err)
	}
	read := filepath.Join(dir, "config", "samples", "big.yaml")
	if err := os.WriteFile(read, make([]byte, MaxFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Validate(context.Background(), dir, KindAuto, Options{})
	if err == nil || !strings.Contains(err.Error(), "over the 10 MiB limit") {
		t.Errorf("a 10 MiB file in config/: err = %v, want the limit to refuse it", err)
	}
}

// A billion-laughs document is refused by the YAML decoder's alias bound,
// and the run ends with a clear error (exit 2) instead of expanding it.
func TestYAMLBombIsBounded(t *testing.T) {
	dir := copyDir(t, sampleBundle)
	var b strings.Builder
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(n + ": &" + n + " [")
		for i := range 9 {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = n
	}
	if err := os.WriteFile(filepath.Join(dir, "manifests", "bomb.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Validate(context.Background(), dir, KindAuto, Options{})
	if err == nil || !strings.Contains(err.Error(), "excessive aliasing") {
		t.Errorf("err = %v, want the YAML alias bound to refuse it", err)
	}
}

func TestChartArchiveValidates(t *testing.T) {
	c, err := loader.Load(sampleChart)
	if err != nil {
		t.Fatal(err)
	}
	file, err := chartutil.Save(c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Validate(context.Background(), file, KindAuto, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Path != file || len(rs[0].Findings) != 1 || rs[0].Findings[0].Check != "OPC-C008" {
		t.Errorf("archive report %+v", rs[0])
	}
}
