package publish

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/yaml"
)

// Actions reported for artifacts and the catalog.
const (
	ActionPushed     = "pushed"
	ActionUnchanged  = "unchanged"
	ActionWouldPush  = "would push"
	ActionForced     = "overwritten"
	ActionWouldForce = "would overwrite"
)

// Artifact is one thing pushed to the registry.
type Artifact struct {
	Kind   string `json:"kind"` // bundle, catalog or chart
	Ref    string `json:"ref"`
	Digest string `json:"digest,omitempty"` // manifest digest
	// ContentDigest is the chart archive's digest (charts only).
	ContentDigest string `json:"contentDigest,omitempty"`
	Size          int64  `json:"size"`
	Action        string `json:"action"`
}

// CatalogResult says what happened to the local catalog.
type CatalogResult struct {
	Dir            string          `json:"dir"`
	File           string          `json:"file"`
	Action         string          `json:"action"` // created, updated, unchanged, would create, would update
	Bundle         string          `json:"bundle"` // added, unchanged, replaced
	DefaultChannel string          `json:"defaultChannel"`
	Changes        []ChannelChange `json:"changes,omitempty"`
}

// Result is the summary of one publish.
type Result struct {
	Package   string         `json:"package"`
	Version   string         `json:"version"`
	Bundle    string         `json:"bundle"`
	DryRun    bool           `json:"dryRun,omitempty"`
	Artifacts []Artifact     `json:"artifacts"`
	Catalog   *CatalogResult `json:"catalog,omitempty"`
	// Image says how the manager's image was built, or why it was not.
	Image      *ImageResult `json:"image"`
	ChartIndex string       `json:"chartIndex,omitempty"`
}

// Unchanged reports whether the publish changed nothing.
func (r *Result) Unchanged() bool {
	for _, a := range r.Artifacts {
		if a.Action != ActionUnchanged {
			return false
		}
	}
	return r.Catalog == nil || r.Catalog.Action == ActionUnchanged
}

// Publish pushes the bundle, catalog and chart that `opctl package` wrote
// under dir. Everything is built and checked first: the catalog's upgrade
// graph, and every tag against the registry. Only then are images pushed
// (by digest), the chart pushed, the tags set and the catalog written.
func Publish(ctx context.Context, dir string, opts Options) (*Result, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	step := func(format string, args ...any) { fmt.Fprintf(opts.Progress, format+"\n", args...) }
	t, err := connect(ctx, opts)
	if err != nil {
		return nil, err
	}
	manager, image, dir, cleanup, err := packageSource(ctx, t, dir, &opts)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	in, err := loadInput(dir, opts.Name)
	if err != nil {
		return nil, err
	}
	res := &Result{Package: in.Package, Version: in.Version.String(), Bundle: in.CSVName, DryRun: opts.DryRun, Image: image}

	step("building the bundle image of %s", in.CSVName)
	bundleImg, err := buildBundleImage(in, opts)
	if err != nil {
		return nil, err
	}
	bundle, err := t.plan(ctx, "bundle", t.Repo(in.Package+"-bundle")+":v"+in.Version.String(), bundleImg, opts.Force, true)
	if err != nil {
		return nil, err
	}
	var (
		catalog    *catalogPlan
		catalogArt *imageArtifact
	)
	if opts.CatalogDir != "" {
		image := ""
		if !opts.ImageLess {
			image = bundle.digestRef()
		}
		if catalog, err = planCatalog(ctx, opts.CatalogDir, in, catalogEditFor(in, opts, image)); err != nil {
			return nil, err
		}
		img, err := buildImage(map[string]string{catalogConfigsLabel: "/configs"},
			[]imageLayer{{Dir: "configs", Files: catalog.Files, CreatedBy: "ADD catalog /configs"}}, opts.Created)
		if err != nil {
			return nil, fmt.Errorf("building the catalog image: %w", err)
		}
		if catalogArt, err = t.plan(ctx, "catalog", t.Repo(in.Package+"-catalog")+":"+opts.CatalogTag, img, true, false); err != nil {
			return nil, err
		}
	}
	var chart *chartPlan
	if in.ChartDir != "" {
		if chart, err = t.planChart(ctx, in.ChartDir, opts); err != nil {
			return nil, err
		}
	}

	// Nothing has changed yet. From here on, push: the manager's image
	// first, as the bundle and chart refer to it.
	var arts []*imageArtifact
	if manager != nil {
		arts = append(arts, manager)
	}
	arts = append(arts, bundle)
	if catalogArt != nil {
		arts = append(arts, catalogArt)
	}
	for _, a := range arts {
		if err := a.push(ctx, t, opts.DryRun, step); err != nil {
			return nil, err
		}
	}
	if chart != nil {
		if err := chart.push(t, opts, step); err != nil {
			return nil, err
		}
	}
	for _, a := range arts {
		if err := a.tag(ctx, t, opts.DryRun); err != nil {
			return nil, err
		}
		res.Artifacts = append(res.Artifacts, a.Artifact)
	}
	if chart != nil {
		res.Artifacts = append(res.Artifacts, chart.Artifact)
		if opts.ChartRepoDir != "" {
			if res.ChartIndex, err = writeChartRepo(opts, chart.archive); err != nil {
				return nil, err
			}
		}
	}
	if catalog != nil {
		if res.Catalog, err = writeCatalog(opts, catalog); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// catalogConfigsLabel tells opm and catalogd where the FBC lives in an image.
const catalogConfigsLabel = "operators.operatorframework.io.index.configs.v1"

func catalogEditFor(in *input, opts Options, image string) catalogEdit {
	e := catalogEdit{
		Image: image, Channels: opts.Channels, DefaultChannel: opts.DefaultChannel,
		Replaces: opts.Replaces, Skips: opts.Skips, SkipRange: opts.SkipRange, Force: opts.Force,
	}
	if len(e.Channels) == 0 {
		e.Channels = in.Channels
	}
	if e.DefaultChannel == "" && in.DefaultChannel != "" {
		e.DefaultChannel = in.DefaultChannel
	}
	if len(e.Skips) == 0 {
		e.Skips = in.Skips
	}
	if e.SkipRange == "" {
		e.SkipRange = in.SkipRange
	}
	return e
}

// buildBundleImage builds what bundle.Dockerfile builds: FROM scratch, the
// annotations as labels, manifests/ and metadata/ as two layers.
func buildBundleImage(in *input, opts Options) (v1.Image, error) {
	b, err := os.ReadFile(filepath.Join(in.BundleDir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, err
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(b, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(in.BundleDir, "metadata", "annotations.yaml"), err)
	}
	var layers []imageLayer
	for _, sub := range []string{"manifests", "metadata"} {
		l := imageLayer{Dir: sub, CreatedBy: fmt.Sprintf("COPY %s /%s/", sub, sub)}
		for _, f := range in.BundleFiles {
			if rel, ok := strings.CutPrefix(f.Path, sub+"/"); ok {
				l.Files = append(l.Files, file{Path: rel, Data: f.Data})
			}
		}
		layers = append(layers, l)
	}
	img, err := buildImage(meta.Annotations, layers, opts.Created)
	if err != nil {
		return nil, fmt.Errorf("building the bundle image of %s: %w", in.BundleDir, err)
	}
	return img, nil
}
