package publish

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/pkg/image"
	"github.com/operator-framework/operator-registry/pkg/registry"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// input is one package read from `opctl package` output.
type input struct {
	Package   string
	Version   semver.Version
	CSVName   string
	BundleDir string
	// ChartDir is empty when the output holds no chart (--bundle-only).
	ChartDir string

	Bundle         *registry.Bundle
	BundleFiles    []file // manifests/ and metadata/, relative to BundleDir
	Channels       []string
	DefaultChannel string
	Replaces       string
	Skips          []string
	SkipRange      string
}

// loadInput finds bundle/<name> and charts/<name> under dir. name may be
// empty when dir holds one bundle.
func loadInput(dir, name string) (*input, error) {
	if name == "" {
		var err error
		if name, err = onlyBundle(dir); err != nil {
			return nil, err
		}
	}
	in := &input{BundleDir: filepath.Join(dir, "bundle", name)}
	if _, err := os.Stat(filepath.Join(in.BundleDir, "metadata", "annotations.yaml")); err != nil {
		return nil, fmt.Errorf("%s is not an OLM bundle (no metadata/annotations.yaml): run `opctl package` first and pass its --out directory: %w", in.BundleDir, err)
	}
	ii, err := registry.NewImageInput(image.SimpleReference(""), in.BundleDir)
	if err != nil {
		return nil, fmt.Errorf("reading bundle %s: %w", in.BundleDir, err)
	}
	b := ii.Bundle
	in.Bundle, in.Package, in.CSVName = b, b.Package, b.Name
	if in.Package == "" {
		return nil, fmt.Errorf("%s: metadata/annotations.yaml has no operators.operatorframework.io.bundle.package.v1", in.BundleDir)
	}
	v, err := b.Version()
	if err != nil {
		return nil, fmt.Errorf("%s: reading the CSV's spec.version: %w", in.BundleDir, err)
	}
	if in.Version, err = semver.Parse(v); err != nil {
		return nil, fmt.Errorf("%s: the CSV's spec.version %q is not SemVer: %w", in.BundleDir, v, err)
	}
	in.Channels = b.Channels
	if b.Annotations != nil {
		in.DefaultChannel = b.Annotations.DefaultChannelName
	}
	if in.Replaces, err = b.Replaces(); err != nil {
		return nil, fmt.Errorf("%s: reading spec.replaces: %w", in.BundleDir, err)
	}
	if in.Skips, err = b.Skips(); err != nil {
		return nil, fmt.Errorf("%s: reading spec.skips: %w", in.BundleDir, err)
	}
	if in.SkipRange, err = b.SkipRange(); err != nil {
		return nil, fmt.Errorf("%s: reading olm.skipRange: %w", in.BundleDir, err)
	}
	for _, sub := range []string{"manifests", "metadata"} {
		files, err := readTree(os.DirFS(filepath.Join(in.BundleDir, sub)))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", filepath.Join(in.BundleDir, sub), err)
		}
		for _, f := range files {
			in.BundleFiles = append(in.BundleFiles, file{Path: sub + "/" + f.Path, Data: f.Data})
		}
	}

	chartDir := filepath.Join(dir, "charts", name)
	switch _, err := os.Stat(filepath.Join(chartDir, "Chart.yaml")); {
	case err == nil:
		ch, err := loader.LoadDir(chartDir)
		if err != nil {
			return nil, fmt.Errorf("loading chart %s: %w", chartDir, err)
		}
		if ch.Metadata.Version != in.Version.String() {
			return nil, fmt.Errorf("%s has version %s but the bundle has %s: package both again with one `opctl package` run", filepath.Join(chartDir, "Chart.yaml"), ch.Metadata.Version, in.Version)
		}
		in.ChartDir = chartDir
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	return in, nil
}

// onlyBundle returns the name of the one bundle under dir/bundle.
func onlyBundle(dir string) (string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, "bundle"))
	if err != nil {
		return "", fmt.Errorf("%s holds no bundle/ directory: pass the directory `opctl package` wrote (its --out): %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	switch len(names) {
	case 0:
		return "", fmt.Errorf("%s holds no bundle: run `opctl package` first", filepath.Join(dir, "bundle"))
	case 1:
		return names[0], nil
	}
	return "", fmt.Errorf("%s holds several bundles (%s): pass --name", filepath.Join(dir, "bundle"), strings.Join(names, ", "))
}
