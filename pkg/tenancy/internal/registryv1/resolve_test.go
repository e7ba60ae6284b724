package registryv1

import (
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
)

// graphCatalog is package kv with channel stable:
//
//	0.1.0 ← 0.2.0 (replaces) ← 0.3.0 (skips 0.2.0, replaces 0.1.0) ← 0.4.0
//
// channel ranged, whose 0.4.0 is reached from 0.1.0 only by its skipRange,
// channel broken, whose 0.2.0 does not connect to 0.1.0, and channel fast.
func graphCatalog() *declcfg.DeclarativeConfig {
	b := func(v string) declcfg.Bundle {
		return declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: "kv", Name: "kv.v" + v, Properties: []property.Property{property.MustBuildPackage("kv", v)}}
	}
	return &declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: "kv", DefaultChannel: "stable"}},
		Channels: []declcfg.Channel{
			{Schema: declcfg.SchemaChannel, Package: "kv", Name: "stable", Entries: []declcfg.ChannelEntry{
				{Name: "kv.v0.1.0"}, {Name: "kv.v0.2.0", Replaces: "kv.v0.1.0"},
				{Name: "kv.v0.3.0", Replaces: "kv.v0.1.0", Skips: []string{"kv.v0.2.0"}},
				{Name: "kv.v0.4.0", Replaces: "kv.v0.3.0"},
			}},
			{Schema: declcfg.SchemaChannel, Package: "kv", Name: "ranged", Entries: []declcfg.ChannelEntry{
				{Name: "kv.v0.1.0"}, {Name: "kv.v0.4.0", SkipRange: "<0.4.0"},
			}},
			{Schema: declcfg.SchemaChannel, Package: "kv", Name: "broken", Entries: []declcfg.ChannelEntry{
				{Name: "kv.v0.1.0"}, {Name: "kv.v0.2.0"},
			}},
			{Schema: declcfg.SchemaChannel, Package: "kv", Name: "fast", Entries: []declcfg.ChannelEntry{
				{Name: "kv.v0.1.0"}, {Name: "kv.v0.2.0", Replaces: "kv.v0.1.0"},
			}},
		},
		Bundles: []declcfg.Bundle{b("0.1.0"), b("0.2.0"), b("0.3.0"), b("0.4.0")},
	}
}

func TestResolveBundle(t *testing.T) {
	tests := []struct {
		name        string
		in          ResolveInput
		want        string
		wantPending []string
		wantErr     string
	}{
		{name: "first install takes the head", in: ResolveInput{Channel: "stable"}, want: "0.4.0"},
		{name: "automatic follows the graph from the running version", in: ResolveInput{Channel: "fast", Running: "0.1.0"}, want: "0.2.0"},
		{name: "skips edges count", in: ResolveInput{Channel: "stable", Running: "0.2.0"}, want: "0.4.0"},
		{name: "skipRange edges count", in: ResolveInput{Channel: "ranged", Running: "0.1.0"}, want: "0.4.0"},
		{name: "a running version the graph does not lead on from stays", in: ResolveInput{Channel: "broken", Running: "0.1.0"}, want: "0.1.0", wantPending: []string{"0.2.0"}},
		{name: "a running version not in the channel takes the head", in: ResolveInput{Channel: "fast", Running: "0.9.0"}, want: "0.2.0"},
		{name: "pinned", in: ResolveInput{Channel: "stable", Pinned: "0.2.0", Running: "0.3.0"}, want: "0.2.0", wantPending: []string{"0.3.0", "0.4.0"}},
		{name: "manual stays at the running version", in: ResolveInput{Channel: "stable", Running: "0.1.0", Manual: true}, want: "0.1.0", wantPending: []string{"0.2.0", "0.3.0", "0.4.0"}},
		{name: "manual first install takes the head", in: ResolveInput{Channel: "fast", Manual: true}, want: "0.2.0"},
		{name: "manual pinned", in: ResolveInput{Channel: "fast", Pinned: "0.1.0", Manual: true}, want: "0.1.0", wantPending: []string{"0.2.0"}},
		{name: "pinned version not in the channel", in: ResolveInput{Channel: "fast", Pinned: "0.3.0"}, wantErr: "has no version 0.3.0 (spec.operators[].version); it has [0.1.0 0.2.0]"},
		{name: "unknown channel", in: ResolveInput{Channel: "beta"}, wantErr: "package kv has no channel beta"},
		{name: "two heads", in: ResolveInput{Channel: "broken"}, wantErr: "has 2 heads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Pkg = "kv"
			r, err := ResolveBundle(graphCatalog(), tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Version.String(); got != tt.want || r.Bundle.Name != "kv.v"+tt.want {
				t.Errorf("resolved %s (%s), want %s", got, r.Bundle.Name, tt.want)
			}
			if !slices.Equal(r.Pending, tt.wantPending) {
				t.Errorf("pending %v, want %v", r.Pending, tt.wantPending)
			}
		})
	}
}
