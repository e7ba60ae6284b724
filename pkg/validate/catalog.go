package validate

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"opctl.dev/opctl/pkg/fbc"
)

// catalogInput is what catalog checks read.
type catalogInput struct {
	ctx  context.Context
	fsys fs.FS
	cfg  *declcfg.DeclarativeConfig
	// problems are the upgrade-graph problems of every package, in
	// catalog order.
	problems []graphProblem
}

// graphProblem is a problem package fbc found in a package's graph.
type graphProblem struct {
	fbc.Problem
	pkg string
}

func (*catalogInput) kind() string { return KindCatalog }

// ValidateCatalog checks a file-based catalog: operator-registry's own
// validation, then the upgrade graph of every channel. An error means dir
// holds no loadable catalog.
func ValidateCatalog(ctx context.Context, dir string) (*Report, error) {
	fsys := os.DirFS(dir)
	cfg, err := declcfg.LoadFS(ctx, fsys)
	if err != nil {
		return nil, fmt.Errorf("%s is not a loadable file-based catalog: %w", dir, err)
	}
	r := &Report{Path: dir, Kind: KindCatalog, Findings: []Finding{}}
	runChecks(r, &catalogInput{ctx: ctx, fsys: fsys, cfg: cfg, problems: graphProblems(cfg)})
	return r, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// graphProblems finds the upgrade-graph problems of every package (see
// package fbc), which it finds even when the catalog does not convert into
// a model.
func graphProblems(cfg *declcfg.DeclarativeConfig) []graphProblem {
	channels := map[string][]declcfg.Channel{}
	for _, ch := range cfg.Channels {
		channels[ch.Package] = append(channels[ch.Package], ch)
	}
	versions := fbc.Versions(cfg.Bundles)
	var out []graphProblem
	for _, pkg := range cfg.Packages {
		for _, p := range fbc.CheckPackage(pkg, channels[pkg.Name], versions) {
			out = append(out, graphProblem{Problem: p, pkg: pkg.Name})
		}
	}
	return out
}
