package fbc

import (
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

func TestCheckPackage(t *testing.T) {
	versions := map[string]semver.Version{
		"op.v0.1.0": semver.MustParse("0.1.0"), "op.v0.2.0": semver.MustParse("0.2.0"),
		"op.v0.3.0": semver.MustParse("0.3.0"), "op.v0.4.0": semver.MustParse("0.4.0"),
	}
	e := func(name, replaces string, skips ...string) declcfg.ChannelEntry {
		return declcfg.ChannelEntry{Name: name, Replaces: replaces, Skips: skips}
	}
	tests := []struct {
		name    string
		def     string
		entries []declcfg.ChannelEntry
		want    string // substring of the error; "" for valid
	}{
		{"empty channel", "stable", nil, ""},
		{"one bundle", "stable", []declcfg.ChannelEntry{e("op.v0.1.0", "")}, ""},
		{"chain", "stable", []declcfg.ChannelEntry{e("op.v0.1.0", ""), e("op.v0.2.0", "op.v0.1.0"), e("op.v0.3.0", "op.v0.2.0")}, ""},
		{"replaces outside the channel is the tail", "stable", []declcfg.ChannelEntry{e("op.v0.2.0", "op.v0.1.0")}, ""},
		{"skips make bundles reachable", "stable", []declcfg.ChannelEntry{e("op.v0.1.0", ""), e("op.v0.2.0", "op.v0.1.0"), e("op.v0.3.0", "op.v0.1.0", "op.v0.2.0")}, ""},
		{"skipRange alone leaves several heads", "stable", []declcfg.ChannelEntry{
			e("op.v0.1.0", ""), e("op.v0.2.0", ""), {Name: "op.v0.3.0", SkipRange: "<0.3.0"},
		}, "3 heads"}, // as in OLM, skipRange is not an incoming edge
		{"skipRange reaches bundles off the chain", "stable", []declcfg.ChannelEntry{
			e("op.v0.1.0", "", "op.v0.2.0"), e("op.v0.2.0", "", "op.v0.1.0"), {Name: "op.v0.3.0", SkipRange: "<0.3.0"},
		}, ""},
		{"skips cycle off the chain is unreachable", "stable", []declcfg.ChannelEntry{
			e("op.v0.1.0", "", "op.v0.2.0"), e("op.v0.2.0", "", "op.v0.1.0"), e("op.v0.3.0", ""),
		}, "op.v0.1.0, op.v0.2.0 cannot be reached from the head op.v0.3.0"},
		{"skipped bundle's predecessors stay reachable", "stable", []declcfg.ChannelEntry{
			e("op.v0.1.0", ""), e("op.v0.2.0", "op.v0.1.0"), e("op.v0.3.0", "", "op.v0.2.0"),
		}, ""},
		{"two heads", "stable", []declcfg.ChannelEntry{e("op.v0.1.0", ""), e("op.v0.2.0", "")}, "2 heads (op.v0.1.0, op.v0.2.0)"},
		{"cycle", "stable", []declcfg.ChannelEntry{e("op.v0.1.0", "op.v0.2.0"), e("op.v0.2.0", "op.v0.1.0")}, "has 0 heads"},
		{"cycle below the head", "stable", []declcfg.ChannelEntry{e("op.v0.1.0", "op.v0.2.0"), e("op.v0.2.0", "op.v0.1.0"), e("op.v0.3.0", "op.v0.2.0")}, "replaces cycle op.v0.1.0 -> op.v0.2.0 -> op.v0.1.0"},
		{"duplicate entry", "stable", []declcfg.ChannelEntry{e("op.v0.1.0", ""), e("op.v0.1.0", "")}, "twice"},
		{"missing default channel", "fast", []declcfg.ChannelEntry{e("op.v0.1.0", "")}, `default channel "fast" is not one of its channels`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkg := declcfg.Package{Name: "op", DefaultChannel: tt.def}
			ch := declcfg.Channel{Name: "stable", Package: "op", Entries: tt.entries}
			problems := CheckPackage(pkg, []declcfg.Channel{ch}, versions)
			var msgs []string
			for _, p := range problems {
				msgs = append(msgs, p.Message)
			}
			got := strings.Join(msgs, "\n")
			switch {
			case tt.want == "" && len(problems) > 0:
				t.Fatalf("unexpected problems: %s", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Fatalf("problems %q, want one containing %q", got, tt.want)
			}
		})
	}
}
