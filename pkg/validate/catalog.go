package validate

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/pkg/lib/config"
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
		r.Findings = append(r.Findings, Finding{Check: "OPC-K000", Severity: SeverityError, Message: oneLine(err.Error()), Source: "operator-registry/config.Validate"})
	}
	checkGraphs(r, cfg)
	return r, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// checkGraphs works on the declarative config itself, so it reports even
// when the catalog does not convert into a model: every package needs a
// default channel that exists, every channel one head (an entry nothing
// replaces or skips), and every entry reachable from the head.
func checkGraphs(r *Report, cfg *declcfg.DeclarativeConfig) {
	channels := map[string][]declcfg.Channel{}
	for _, ch := range cfg.Channels {
		channels[ch.Package] = append(channels[ch.Package], ch)
	}
	for _, pkg := range cfg.Packages {
		obj := "olm.package/" + pkg.Name
		if !slices.ContainsFunc(channels[pkg.Name], func(c declcfg.Channel) bool { return c.Name == pkg.DefaultChannel }) {
			r.add("OPC-K001", fmt.Sprintf("package %s: default channel %q is not one of its channels", pkg.Name, pkg.DefaultChannel), "", obj)
		}
		for _, ch := range channels[pkg.Name] {
			entries := map[string]declcfg.ChannelEntry{}
			replaced := map[string]bool{}
			for _, e := range ch.Entries {
				entries[e.Name] = e
				if e.Replaces != "" {
					replaced[e.Replaces] = true
				}
				for _, s := range e.Skips {
					replaced[s] = true
				}
			}
			var heads []string
			for _, name := range sortedKeys(entries) {
				if !replaced[name] {
					heads = append(heads, name)
				}
			}
			if len(heads) != 1 {
				r.add("OPC-K002", fmt.Sprintf("channel %s has %d heads (%s); it needs exactly one", ch.Name, len(heads), strings.Join(heads, ", ")), "", obj)
				continue
			}
			reached := map[string]bool{}
			for next := heads; len(next) > 0; next = next[1:] {
				e, ok := entries[next[0]]
				if !ok || reached[e.Name] {
					continue
				}
				reached[e.Name] = true
				if e.Replaces != "" {
					next = append(next, e.Replaces)
				}
				next = append(next, e.Skips...)
			}
			var orphans []string
			for _, name := range sortedKeys(entries) {
				if !reached[name] {
					orphans = append(orphans, name)
				}
			}
			if len(orphans) > 0 {
				r.add("OPC-K003", fmt.Sprintf("channel %s: %s cannot be reached from the head %s", ch.Name, strings.Join(orphans, ", "), heads[0]), "", obj)
			}
		}
	}
}
