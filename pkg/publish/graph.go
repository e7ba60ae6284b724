package publish

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

// channelHeads returns the entries of ch that no other entry replaces or
// skips, sorted. A healthy channel has exactly one.
func channelHeads(ch declcfg.Channel) []string {
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

// checkGraph checks the upgrade graph of one package: the default channel
// exists, and every channel has unique entries, exactly one head, no
// replaces cycle and no entry unreachable from the head (an entry skipped
// or inside a skipRange is reachable on purpose).
func checkGraph(pkg declcfg.Package, channels []declcfg.Channel, versions map[string]semver.Version) error {
	var errs []string
	found := false
	for _, ch := range channels {
		if ch.Name == pkg.DefaultChannel {
			found = true
		}
		if err := checkChannel(ch, versions); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if !found {
		errs = append(errs, fmt.Sprintf("package %s: default channel %q does not exist: pass --default-channel with one of its channels", pkg.Name, pkg.DefaultChannel))
	}
	if len(errs) > 0 {
		return fmt.Errorf("upgrade graph of package %s is invalid:\n  %s", pkg.Name, strings.Join(errs, "\n  "))
	}
	return nil
}

func checkChannel(ch declcfg.Channel, versions map[string]semver.Version) error {
	entries := map[string]declcfg.ChannelEntry{}
	for _, e := range ch.Entries {
		if _, dup := entries[e.Name]; dup {
			return fmt.Errorf("channel %s lists %s twice", ch.Name, e.Name)
		}
		entries[e.Name] = e
	}
	heads := channelHeads(ch)
	switch {
	case len(heads) == 0 && len(ch.Entries) > 0:
		return fmt.Errorf("channel %s has no head: its replaces form a cycle", ch.Name)
	case len(heads) > 1:
		return fmt.Errorf("channel %s would have %d heads (%s): each new bundle must replace or skip the previous head (use --replaces auto)", ch.Name, len(heads), strings.Join(heads, ", "))
	case len(heads) == 0:
		return nil
	}
	for _, e := range ch.Entries {
		if cycle := replacesCycle(e.Name, entries); cycle != "" {
			return fmt.Errorf("channel %s: replaces cycle %s", ch.Name, cycle)
		}
	}
	// Walk back from the head over replaces, skips and skipRange: every
	// entry met can upgrade to the head.
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
	for _, e := range ch.Entries {
		if !reached[e.Name] {
			lost = append(lost, e.Name)
		}
	}
	if len(lost) > 0 {
		sort.Strings(lost)
		return fmt.Errorf("channel %s: %s cannot be upgraded to the head %s: replace or skip them from the chain", ch.Name, strings.Join(lost, ", "), heads[0])
	}
	return nil
}

// replacesCycle follows replaces from name and returns the cycle it meets,
// like "a -> b -> a", or "".
func replacesCycle(name string, entries map[string]declcfg.ChannelEntry) string {
	seen := map[string]bool{}
	var path []string
	for name != "" {
		if seen[name] {
			return strings.Join(append(path, name), " -> ")
		}
		e, ok := entries[name]
		if !ok {
			return ""
		}
		seen[name] = true
		path = append(path, name)
		name = e.Replaces
	}
	return ""
}
