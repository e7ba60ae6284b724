package registryv1

import (
	"fmt"
	"slices"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"opctl.dev/opctl/pkg/fbc"
)

// Resolution is the bundle an operator should run, and the newer
// versions of its channel that it does not run.
type Resolution struct {
	Bundle  *declcfg.Bundle
	Version semver.Version
	Pending []string
}

// ResolveInput is what resolveBundle decides from.
type ResolveInput struct {
	Pkg, Channel string
	// Pinned is spec.operators[].version; running is the version
	// deployed now ("" before the first install).
	Pinned, Running string
	Manual          bool
}

// ResolveBundle picks a bundle from a catalog's upgrade graph as OLM
// would:
//   - a pinned version is that version of the channel;
//   - Manual without a pin stays at the running version (the channel
//     head on a first install);
//   - Automatic takes the newest entry reachable from the running one
//     over replaces, skips and skipRange edges: the channel head when the
//     graph is whole.
//
// The entries newer than the choice are pending.
func ResolveBundle(cfg *declcfg.DeclarativeConfig, in ResolveInput) (*Resolution, error) {
	var ch *declcfg.Channel
	for i := range cfg.Channels {
		if c := &cfg.Channels[i]; c.Package == in.Pkg && c.Name == in.Channel {
			ch = c
		}
	}
	if ch == nil {
		return nil, fmt.Errorf("package %s has no channel %s in the catalog", in.Pkg, in.Channel)
	}
	bundles := map[string]*declcfg.Bundle{}
	var pkgBundles []declcfg.Bundle
	for i := range cfg.Bundles {
		if b := &cfg.Bundles[i]; b.Package == in.Pkg {
			bundles[b.Name] = b
			pkgBundles = append(pkgBundles, *b)
		}
	}
	versions := fbc.Versions(pkgBundles)
	byVersion := map[string]string{}
	for _, e := range ch.Entries {
		v, ok := versions[e.Name]
		if !ok || bundles[e.Name] == nil {
			return nil, fmt.Errorf("channel %s of package %s: entry %s has no bundle with an olm.package version", in.Channel, in.Pkg, e.Name)
		}
		byVersion[v.String()] = e.Name
	}
	pick := func(version, why string) (string, error) {
		if n, ok := byVersion[version]; ok {
			return n, nil
		}
		return "", fmt.Errorf("channel %s of package %s has no version %s (%s); it has %v", in.Channel, in.Pkg, version, why, sortedVersions(byVersion))
	}
	var target string
	var err error
	switch {
	case in.Pinned != "":
		target, err = pick(in.Pinned, "spec.operators[].version")
	case in.Manual && in.Running != "":
		target, err = pick(in.Running, "the running version")
	case in.Running != "" && byVersion[in.Running] != "":
		target = newestReachable(*ch, byVersion[in.Running], versions)
	default:
		heads := fbc.Heads(*ch)
		if len(heads) != 1 {
			return nil, fmt.Errorf("channel %s of package %s has %d heads %v, want one: fix the catalog's replaces and skips", in.Channel, in.Pkg, len(heads), heads)
		}
		target = heads[0]
	}
	if err != nil {
		return nil, err
	}
	r := &Resolution{Bundle: bundles[target], Version: versions[target]}
	for _, e := range ch.Entries {
		if versions[e.Name].GT(r.Version) {
			r.Pending = append(r.Pending, versions[e.Name].String())
		}
	}
	slices.SortFunc(r.Pending, func(a, b string) int { return semver.MustParse(a).Compare(semver.MustParse(b)) })
	return r, nil
}

// newestReachable walks the upgrade edges from the entry from: an entry
// upgrades X when it replaces X, skips X, or its skipRange holds X's
// version. It returns the newest entry reached.
func newestReachable(ch declcfg.Channel, from string, versions map[string]semver.Version) string {
	upgrades := func(e declcfg.ChannelEntry, x string) bool {
		if e.Replaces == x || slices.Contains(e.Skips, x) {
			return true
		}
		if e.SkipRange == "" {
			return false
		}
		r, err := semver.ParseRange(e.SkipRange)
		return err == nil && r(versions[x])
	}
	seen, queue, best := map[string]bool{from: true}, []string{from}, from
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		if versions[x].GT(versions[best]) {
			best = x
		}
		for _, e := range ch.Entries {
			if !seen[e.Name] && upgrades(e, x) {
				seen[e.Name] = true
				queue = append(queue, e.Name)
			}
		}
	}
	return best
}

func sortedVersions(byVersion map[string]string) []string {
	var vs []semver.Version
	for v := range byVersion {
		vs = append(vs, semver.MustParse(v))
	}
	semver.Sort(vs)
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return out
}
