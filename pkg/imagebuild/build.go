package imagebuild

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"opctl.dev/opctl/internal/ocilayer"
)

// Result is what Build made.
type Result struct {
	// Index joins one image per platform, in Options.Platforms order.
	Index v1.ImageIndex
	// SBOM is the SPDX document (JSON) of the binary's modules, the same
	// on every platform.
	SBOM []byte
	// Modules are path@version of the modules linked, main first.
	Modules []string
	// Base is the base as given and its digest ("" for scratch);
	// CADigest the digest of the scratch base's CA bundle.
	Base, BaseDigest, CADigest string
	// GoVersion is the toolchain that built the binaries.
	GoVersion string
}

// Build builds the main package for every platform and assembles the
// index. Nothing is pushed.
func Build(ctx context.Context, o Options) (*Result, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	b, err := resolveBase(&o)
	if err != nil {
		return nil, err
	}
	res := &Result{Base: b.Ref, BaseDigest: b.Digest, CADigest: b.CADigest}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var adds []mutate.IndexAddendum
	for i, p := range o.Platforms {
		fmt.Fprintf(o.Progress, "building %s for %s\n", o.Main, p.String())
		bin, err := goBuild(ctx, &o, p)
		if err != nil {
			return nil, err
		}
		mods := moduleList(bin.Info)
		if i == 0 {
			res.Modules, res.GoVersion = mods, bin.Info.GoVersion
			name := path.Base(bin.Info.Main.Path)
			if res.SBOM, err = sbom(name, bin.Info, Digest(bin.Data), o.Created); err != nil {
				return nil, err
			}
		} else if !slices.Equal(mods, res.Modules) {
			return nil, fmt.Errorf("the %s build links other modules than the %s build (%s against %s): a platform-specific dependency; build each platform apart",
				p.String(), o.Platforms[0].String(), strings.Join(diff(mods, res.Modules), ", "), strings.Join(diff(res.Modules, mods), ", "))
		}
		img, err := platformImage(b, &o, p, bin.Data)
		if err != nil {
			return nil, err
		}
		pp := p
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: &pp}})
	}
	res.Index = mutate.AppendManifests(idx, adds...)
	if ann := o.Labels; len(ann) > 0 {
		ix, ok := mutate.Annotations(res.Index, ann).(v1.ImageIndex)
		if !ok {
			return nil, fmt.Errorf("annotating the index: unexpected type")
		}
		res.Index = ix
	}
	return res, nil
}

// platformImage lays the binary on the base: one layer, the program at
// o.Binary, run as the nonroot user.
func platformImage(b *base, o *Options, p v1.Platform, program []byte) (v1.Image, error) {
	img, err := b.image(p, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := ocilayer.Layer("", []ocilayer.File{{Path: strings.TrimPrefix(o.Binary, "/"), Data: program, Mode: 0o755}}, o.Created)
	if err != nil {
		return nil, err
	}
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{CreatedBy: "opctl: go build " + o.Main + " -> " + o.Binary, Created: v1.Time{Time: o.Created}}})
	if err != nil {
		return nil, fmt.Errorf("adding the program layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = p.OS, p.Architecture, p.Variant
	cfg.Created = v1.Time{Time: o.Created}
	cfg.Config.User = strconv.Itoa(NonRootUID)
	cfg.Config.Entrypoint = []string{o.Binary}
	cfg.Config.Cmd = nil
	cfg.Config.WorkingDir = "/"
	if b.scratch != nil {
		cfg.Config.Env = []string{"PATH=/", "SSL_CERT_FILE=/" + caBundlePath}
	}
	labels := map[string]string{}
	for k, v := range cfg.Config.Labels { // the base's, then ours
		labels[k] = v
	}
	for k, v := range o.Labels {
		labels[k] = v
	}
	cfg.Config.Labels = labels
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("setting the %s image's config: %w", p.String(), err)
	}
	if len(o.Labels) > 0 {
		ann, ok := mutate.Annotations(img, o.Labels).(v1.Image)
		if !ok {
			return nil, fmt.Errorf("annotating the %s image: unexpected type", p.String())
		}
		img = ann
	}
	return img, nil
}

// diff lists what a has and b has not.
func diff(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return []string{"(order)"}
	}
	return out
}
