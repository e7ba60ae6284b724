package validate

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/pkg/lib/config"

	"opctl.dev/opctl/pkg/fbc"
)

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
	if err := config.Validate(ctx, fsys); err != nil {
		r.relay(CatalogModel, SeverityError, oneLine(canonicalTree(err.Error())), "", "operator-registry/config.Validate")
	}
	checkGraphs(r, cfg)
	return r, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// checkGraphs reports the upgrade-graph problems of every package (see
// package fbc), which it finds even when the catalog does not convert into
// a model.
func checkGraphs(r *Report, cfg *declcfg.DeclarativeConfig) {
	channels := map[string][]declcfg.Channel{}
	for _, ch := range cfg.Channels {
		channels[ch.Package] = append(channels[ch.Package], ch)
	}
	versions := fbc.Versions(cfg.Bundles)
	checks := map[fbc.Kind]*Check{fbc.DefaultChannelMissing: DefaultChannel, fbc.HeadCount: ChannelHead, fbc.Cycle: ChannelHead, fbc.Unreachable: ReachableBundles}
	for _, pkg := range cfg.Packages {
		for _, p := range fbc.CheckPackage(pkg, channels[pkg.Name], versions) {
			r.add(checks[p.Kind], p.Message, "", "olm.package/"+pkg.Name)
		}
	}
}
