package fbc

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
)

// Kind classifies a Problem.
type Kind string

// Problem kinds.
const (
	// DefaultChannelMissing: the package's default channel does not exist.
	DefaultChannelMissing Kind = "DefaultChannelMissing"
	// HeadCount: a channel has no head or several, or lists an entry twice.
	HeadCount Kind = "HeadCount"
	// Cycle: replaces edges form a loop.
	Cycle Kind = "Cycle"
	// Unreachable: entries that cannot upgrade to the channel head.
	Unreachable Kind = "Unreachable"
)

// Problem is one defect of an upgrade graph.
type Problem struct {
	Kind    Kind
	Package string
	Channel string
	Message string
}

func (p Problem) String() string { return p.Message }

// Heads returns the entries of ch that no other entry replaces or skips,
// sorted. As in OLM, an olm.skipRange is not an incoming edge.
func Heads(ch declcfg.Channel) []string {
	incoming := map[string]bool{}
	for _, e := range ch.Entries {
		if e.Replaces != "" {
			incoming[e.Replaces] = true
		}
		for _, s := range e.Skips {
			incoming[s] = true
		}
	}
	var heads []string
	for _, e := range ch.Entries {
		if !incoming[e.Name] {
			heads = append(heads, e.Name)
		}
	}
	sort.Strings(heads)
	return heads
}

// Versions maps bundle names to their olm.package version; bundles
// without a parsable one are left out.
func Versions(bundles []declcfg.Bundle) map[string]semver.Version {
	vs := map[string]semver.Version{}
	for _, b := range bundles {
		for _, p := range b.Properties {
			if p.Type != property.TypePackage {
				continue
			}
			var pkg property.Package
			if json.Unmarshal(p.Value, &pkg) == nil {
				if v, err := semver.Parse(pkg.Version); err == nil {
					vs[b.Name] = v
				}
			}
		}
	}
	return vs
}

// CheckPackage checks one package: its default channel exists, and each
// of its channels has unique entries, exactly one head, no replaces cycle
// and no entry that cannot reach the head over replaces, skips and
// skipRange edges.
func CheckPackage(pkg declcfg.Package, channels []declcfg.Channel, versions map[string]semver.Version) []Problem {
	var problems []Problem
	found := false
	for _, ch := range channels {
		found = found || ch.Name == pkg.DefaultChannel
		for _, p := range checkChannel(ch, versions) {
			p.Package = pkg.Name
			problems = append(problems, p)
		}
	}
	if !found {
		problems = append(problems, Problem{Kind: DefaultChannelMissing, Package: pkg.Name,
			Message: fmt.Sprintf("package %s: default channel %q is not one of its channels", pkg.Name, pkg.DefaultChannel)})
	}
	return problems
}

func checkChannel(ch declcfg.Channel, versions map[string]semver.Version) []Problem {
	problem := func(k Kind, format string, args ...any) Problem {
		return Problem{Kind: k, Channel: ch.Name, Message: fmt.Sprintf(format, args...)}
	}
	entries := map[string]declcfg.ChannelEntry{}
	for _, e := range ch.Entries {
		if _, dup := entries[e.Name]; dup {
			return []Problem{problem(HeadCount, "channel %s lists %s twice", ch.Name, e.Name)}
		}
		entries[e.Name] = e
	}
	var problems []Problem
	reported := map[string]bool{}
	for _, e := range ch.Entries {
		if cycle := replacesCycle(e.Name, entries); cycle != nil {
			key := strings.Join(sorted(cycle[:len(cycle)-1]), ",")
			if !reported[key] {
				reported[key] = true
				problems = append(problems, problem(Cycle, "channel %s: replaces cycle %s", ch.Name, strings.Join(cycle, " -> ")))
			}
		}
	}
	heads := Heads(ch)
	if len(heads) != 1 {
		if len(ch.Entries) > 0 {
			problems = append(problems, problem(HeadCount, "channel %s has %d heads (%s); it needs exactly one", ch.Name, len(heads), strings.Join(heads, ", ")))
		}
		return problems
	}
	// Walk back from the head: every entry met can upgrade to it.
	reached := map[string]bool{heads[0]: true}
	for queue := []string{heads[0]}; len(queue) > 0; queue = queue[1:] {
		e, ok := entries[queue[0]]
		if !ok {
			continue // replaces a bundle outside the channel: the graph's tail
		}
		next := append([]string{e.Replaces}, e.Skips...)
		if r, err := semver.ParseRange(e.SkipRange); e.SkipRange != "" && err == nil {
			for n := range entries {
				if v, ok := versions[n]; ok && r(v) {
					next = append(next, n)
				}
			}
		}
		for _, n := range next {
			if n != "" && !reached[n] {
				reached[n] = true
				queue = append(queue, n)
			}
		}
	}
	var lost []string
	for name := range entries {
		if !reached[name] {
			lost = append(lost, name)
		}
	}
	if len(lost) > 0 {
		problems = append(problems, problem(Unreachable, "channel %s: %s cannot be reached from the head %s", ch.Name, strings.Join(sorted(lost), ", "), heads[0]))
	}
	return problems
}

// replacesCycle follows replaces from name and returns the loop it meets,
// like [a b a], or nil.
func replacesCycle(name string, entries map[string]declcfg.ChannelEntry) []string {
	index := map[string]int{}
	var path []string
	for name != "" {
		if i, seen := index[name]; seen {
			return append(path[i:], name)
		}
		e, ok := entries[name]
		if !ok {
			return nil
		}
		index[name] = len(path)
		path = append(path, name)
		name = e.Replaces
	}
	return nil
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
