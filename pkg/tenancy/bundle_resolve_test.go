package tenancy

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
		in          resolveInput
		want        string
		wantPending []string
		wantErr     string
	}{
		{name: "first install takes the head", in: resolveInput{channel: "stable"}, want: "0.4.0"},
		{name: "automatic follows the graph from the running version", in: resolveInput{channel: "fast", running: "0.1.0"}, want: "0.2.0"},
		{name: "skips edges count", in: resolveInput{channel: "stable", running: "0.2.0"}, want: "0.4.0"},
		{name: "skipRange edges count", in: resolveInput{channel: "ranged", running: "0.1.0"}, want: "0.4.0"},
		{name: "a running version the graph does not lead on from stays", in: resolveInput{channel: "broken", running: "0.1.0"}, want: "0.1.0", wantPending: []string{"0.2.0"}},
		{name: "a running version not in the channel takes the head", in: resolveInput{channel: "fast", running: "0.9.0"}, want: "0.2.0"},
		{name: "pinned", in: resolveInput{channel: "stable", pinned: "0.2.0", running: "0.3.0"}, want: "0.2.0", wantPending: []string{"0.3.0", "0.4.0"}},
		{name: "manual stays at the running version", in: resolveInput{channel: "stable", running: "0.1.0", manual: true}, want: "0.1.0", wantPending: []string{"0.2.0", "0.3.0", "0.4.0"}},
		{name: "manual first install takes the head", in: resolveInput{channel: "fast", manual: true}, want: "0.2.0"},
		{name: "manual pinned", in: resolveInput{channel: "fast", pinned: "0.1.0", manual: true}, want: "0.1.0", wantPending: []string{"0.2.0"}},
		{name: "pinned version not in the channel", in: resolveInput{channel: "fast", pinned: "0.3.0"}, wantErr: "has no version 0.3.0 (spec.operators[].version); it has [0.1.0 0.2.0]"},
		{name: "unknown channel", in: resolveInput{channel: "beta"}, wantErr: "package kv has no channel beta"},
		{name: "two heads", in: resolveInput{channel: "broken"}, wantErr: "has 2 heads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.pkg = "kv"
			r, err := resolveBundle(graphCatalog(), tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.version.String(); got != tt.want || r.bundle.Name != "kv.v"+tt.want {
				t.Errorf("resolved %s (%s), want %s", got, r.bundle.Name, tt.want)
			}
			if !slices.Equal(r.pending, tt.wantPending) {
				t.Errorf("pending %v, want %v", r.pending, tt.wantPending)
			}
		})
	}
}
