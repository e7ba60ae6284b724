package packaging

import (
	"strings"

	"github.com/spf13/pflag"
)

// bundleDir receives the bundle target's output: bundle/<name>.
const bundleDir = "bundle"

// bundleTarget writes the OLM registry+v1 bundle under bundle/<name>.
type bundleTarget struct{}

func init() { RegisterTarget(bundleTarget{}) }

func (bundleTarget) Name() string              { return "bundle" }
func (bundleTarget) Description() string       { return "the OLM bundle" }
func (bundleTarget) Dir() string               { return bundleDir }
func (bundleTarget) NewOptions() TargetOptions { return &BundleOptions{} }

func (bundleTarget) Render(p *Project, opts TargetOptions) (Files, []string, error) {
	return p.Bundle(*opts.(*BundleOptions))
}

// AddFlags binds the bundle's options to flags of opctl package.
func (o *BundleOptions) AddFlags(f *pflag.FlagSet) {
	f.Var((*channelList)(&o.Channels), "channels", "comma-separated OLM channels of the bundle (default: opctl.yaml channels, the Makefile's CHANNELS, else stable)")
	f.StringVar(&o.DefaultChannel, "default-channel", "", "default OLM channel (default: opctl.yaml defaultChannel, the Makefile's DEFAULT_CHANNEL, else the first channel)")
	f.BoolVar(&o.MultiNamespace, "multi-namespace", false, "allow the MultiNamespace install mode")
	f.StringVar(&o.Replaces, "replaces", "", "CSV this bundle replaces (default: opctl.yaml replaces)")
	f.StringSliceVar(&o.Skips, "skips", nil, "CSVs this bundle skips (default: opctl.yaml skips)")
	f.StringVar(&o.SkipRange, "skip-range", "", "olm.skipRange, like '<0.2.0' (default: opctl.yaml skipRange)")
}

// channelList is --channels: a comma-separated list whose blank entries
// are dropped; the last --channels given wins.
type channelList []string

func (l *channelList) String() string { return strings.Join(*l, ",") }
func (l *channelList) Type() string   { return "string" }

func (l *channelList) Set(v string) error {
	*l = nil
	for _, c := range strings.Split(v, ",") {
		if c = strings.TrimSpace(c); c != "" {
			*l = append(*l, c)
		}
	}
	return nil
}
