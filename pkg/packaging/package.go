package packaging

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
)

// PackageOptions are everything `opctl package` takes.
type PackageOptions struct {
	Load Options
	// PerTarget holds target options by target name (like *ChartOptions
	// under "chart"); a target missing here renders with its defaults.
	PerTarget map[string]TargetOptions
	// Out is the directory that receives charts/ and bundle/; default the
	// project directory.
	Out string
	// Targets names the outputs (TargetNames); empty means all.
	Targets []string
	// PinDigests replaces image tags with digests from the registries,
	// through Resolver (default RegistryResolver).
	PinDigests bool
	Resolver   DigestResolver
	// Builder, when set, builds the manager's image from the project's
	// source before anything renders; the package then names it by the
	// reference Builder returns.
	Builder ImageBuilder
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
	// Strict makes every warning an error, for CI that wants no surprise.
	Strict bool
}

// Result reports what Package wrote.
type Result struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	Out     string   `json:"out"`
	Roots   []string `json:"roots"`
	// Manager is the Deployment opctl took as the operator's manager.
	Manager string `json:"manager"`
	// NamePrefix is the overlay's name prefix, which the chart replaces
	// with the release's names.
	NamePrefix string   `json:"namePrefix,omitempty"`
	Files      []string `json:"files"`
	// Warnings say what was left out and why.
	Warnings      []string       `json:"warnings,omitempty"`
	RelatedImages []RelatedImage `json:"relatedImages"`
	// WatchNamespace is what the manager's code says of the namespaces it
	// watches; PodSecurity the level of the pods shipped.
	WatchNamespace WatchNamespace `json:"watchNamespace"`
	PodSecurity    PodSecurity    `json:"podSecurity"`
	// Placeholders are the ${VAR} the manifests use, outside the CRDs: the
	// chart's placeholders.VAR values; KoImages the ko:// images, its
	// images.<name> values.
	Placeholders []Placeholder `json:"placeholders,omitempty"`
	KoImages     []KoImage     `json:"koImages,omitempty"`
}

// Package loads the project in dir and writes the output of every target
// opts.Targets selects (all by default): its chart and bundle. On any
// error nothing is written.
func Package(ctx context.Context, dir string, opts PackageOptions) (*Result, error) {
	targets, err := selectTargets(opts.Targets)
	if err != nil {
		return nil, err
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	fmt.Fprintf(progress, "building the kustomize overlay of %s\n", dir)
	p, err := Load(dir, opts.Load)
	if err != nil {
		return nil, err
	}
	if opts.Builder != nil {
		if err := p.buildManager(ctx, opts.Builder, progress); err != nil {
			return nil, err
		}
	}
	if opts.PinDigests {
		r := opts.Resolver
		if r == nil {
			r = RegistryResolver{}
		}
		if err := p.PinDigests(ctx, r, progress); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(progress, "rendering %s\n", targetList(targets))
	if _, err := p.analyze(); err != nil {
		return nil, err
	}
	// Targets only read the project, so they render side by side.
	outs := make([]Files, len(targets))
	warns := make([][]string, len(targets))
	errs := make([]error, len(targets))
	topts := make([]TargetOptions, len(targets))
	for i, t := range targets {
		topts[i] = opts.For(t.Name())
	}
	parallel(len(targets), func(i int) { outs[i], warns[i], errs[i] = targets[i].Render(p, topts[i]) })
	files := Files{}
	var warnings []string
	for i := range targets {
		if errs[i] != nil {
			return nil, errs[i]
		}
		merge(files, outs[i])
		warnings = append(warnings, warns[i]...)
	}
	warnings = slices.Compact(slices.Sorted(slices.Values(warnings)))
	if opts.Strict && len(warnings) > 0 {
		return nil, fmt.Errorf("--strict: %d warnings, nothing written:\n  %s", len(warnings), strings.Join(warnings, "\n  "))
	}
	out := opts.Out
	if out == "" {
		out = dir
	}
	fmt.Fprintf(progress, "writing %d files to %s\n", len(files), out)
	if err := WriteFiles(out, files); err != nil {
		return nil, fmt.Errorf("writing to %s: %w", out, err)
	}
	res := &Result{Name: p.Name, Version: p.Version, Out: out, Manager: p.Manager.Name, NamePrefix: p.NamePrefix, Files: files.sortedPaths(), RelatedImages: p.RelatedImages(),
		WatchNamespace: p.Watch, PodSecurity: p.PodSecurity}
	res.Placeholders, res.KoImages = p.scanPlaceholders()
	for _, f := range res.Files {
		parts := strings.SplitN(f, "/", 3)
		if root := parts[0] + "/" + parts[1]; !slices.Contains(res.Roots, root) {
			res.Roots = append(res.Roots, root)
		}
	}
	slices.Sort(res.Roots)
	res.Warnings = warnings
	return res, nil
}

// For returns the options of the target named name, made at their
// defaults and kept in PerTarget when absent; nil for an unknown target.
func (o *PackageOptions) For(name string) TargetOptions {
	if to, ok := o.PerTarget[name]; ok {
		return to
	}
	targetsMu.RLock()
	t, ok := targets[name]
	targetsMu.RUnlock()
	if !ok {
		return nil
	}
	if o.PerTarget == nil {
		o.PerTarget = map[string]TargetOptions{}
	}
	o.PerTarget[name] = t.NewOptions()
	return o.PerTarget[name]
}

func targetList(ts []Target) string {
	var names []string
	for _, t := range ts {
		names = append(names, t.Name())
	}
	return strings.Join(names, " and ")
}
