package validate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"helm.sh/helm/v3/pkg/chartutil"

	"opctl.dev/opctl/pkg/packaging"
)

// Validate checks path as kind (KindAuto detects it). A project is packaged
// in memory first and its chart and bundle are checked. An error means the
// input is unusable.
func Validate(ctx context.Context, path, kind string, opts Options) ([]*Report, error) {
	switch opts.Suite {
	case "":
		opts.Suite = SuiteDefault
	case SuiteDefault, SuiteOperatorHub, SuiteMaturity, SuiteAll:
	default:
		return nil, fmt.Errorf("--suite %q: use default, operatorhub, maturity or all", opts.Suite)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if kind == "" || kind == KindAuto {
		if kind, err = Detect(path); err != nil {
			return nil, err
		}
	}
	// Refuse what must not be read before anything parses it.
	bounded := checkTree
	switch {
	case !fi.IsDir():
		bounded = checkArchive
	case kind == KindProject:
		bounded = checkProjectTree
	}
	if err := bounded(path); err != nil {
		return nil, err
	}
	switch kind {
	case KindBundle:
		r, err := ValidateBundle(path, opts)
		return []*Report{r}, err
	case KindChart:
		if !fi.IsDir() {
			return validateChartArchive(path, opts)
		}
		r, err := ValidateChart(path, opts)
		return []*Report{r}, err
	case KindProject:
		return validateProject(ctx, path, opts)
	case KindCatalog:
		r, err := ValidateCatalog(ctx, path)
		return []*Report{r}, err
	}
	return nil, fmt.Errorf("--kind %q: use auto, bundle, chart, catalog or project", kind)
}

// projectKinds are the targets of opctl package whose output validate
// checks, in report order, and how.
var projectKinds = []struct {
	target   string
	validate func(dir string, opts Options) (*Report, error)
}{
	{KindChart, ValidateChart},
	{KindBundle, ValidateBundle},
}

func validateProject(ctx context.Context, path string, opts Options) ([]*Report, error) {
	out, err := os.MkdirTemp("", "opctl-validate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	res, err := packaging.Package(ctx, path, packaging.PackageOptions{Out: out})
	if err != nil {
		return nil, fmt.Errorf("packaging %s: %w", path, err)
	}
	var reports []*Report
	dirs := map[string]string{}
	for _, k := range projectKinds {
		rel, ok := packaging.TargetDir(k.target, res.Name)
		if !ok {
			return nil, fmt.Errorf("packaging has no %s target", k.target)
		}
		r, err := k.validate(filepath.Join(out, filepath.FromSlash(rel)), opts)
		if err != nil {
			return nil, err
		}
		r.Path = filepath.Join(path, filepath.FromSlash(rel)) + " (packaged)"
		reports = append(reports, r)
		dirs[k.target] = rel
	}
	// The bundle's maturity guidelines count what the chart ships.
	crds, _ := filepath.Glob(filepath.Join(out, filepath.FromSlash(dirs[KindChart]), "templates", "crds", "*.yaml"))
	for _, r := range reports {
		if r.Kind == KindBundle {
			judgeChart(r.Maturity, dirs[KindChart], len(crds) > 0)
		}
	}
	return reports, nil
}

// validateChartArchive expands a checked chart archive and validates it.
func validateChartArchive(file string, opts Options) ([]*Report, error) {
	dir, err := os.MkdirTemp("", "opctl-validate-chart-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := chartutil.ExpandFile(dir, file); err != nil {
		return nil, fmt.Errorf("expanding %s: %w", file, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || !entries[0].IsDir() {
		return nil, fmt.Errorf("%s does not hold one chart directory", file)
	}
	r, err := ValidateChart(filepath.Join(dir, entries[0].Name()), opts)
	if err != nil {
		return nil, err
	}
	r.Path = file
	return []*Report{r}, nil
}
