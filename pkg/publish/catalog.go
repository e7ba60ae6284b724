package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing/fstest"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	"github.com/operator-framework/operator-registry/pkg/lib/config"
	"github.com/operator-framework/operator-registry/pkg/registry"

	"opctl.dev/opctl/pkg/fbc"
)

// Replaces values with a special meaning.
const (
	// ReplacesAuto makes the new bundle replace each channel's current head.
	ReplacesAuto = "auto"
	// ReplacesNone adds the new bundle without a replaces edge.
	ReplacesNone = "none"
)

// ChannelChange is one channel entry publish adds.
type ChannelChange struct {
	Channel    string   `json:"channel"`
	Entry      string   `json:"entry"`
	Replaces   string   `json:"replaces,omitempty"`
	Skips      []string `json:"skips,omitempty"`
	SkipRange  string   `json:"skipRange,omitempty"`
	NewChannel bool     `json:"newChannel,omitempty"`
}

// catalogPlan is the catalog directory after adding a bundle.
type catalogPlan struct {
	// File is the package's file, relative to the catalog directory.
	File   string
	Before []byte // nil when File is new
	After  []byte
	// Files is the whole new catalog, by path relative to its directory.
	Files          []file
	Bundle         string // unchanged, added or replaced
	Changes        []ChannelChange
	DefaultChannel string
}

// Changed reports whether the package file changes.
func (p *catalogPlan) Changed() bool { return !bytes.Equal(p.Before, p.After) }

// catalogEdit says how the bundle goes into the catalog.
type catalogEdit struct {
	Image          string // bundle image reference; empty for an image-less catalog
	Channels       []string
	DefaultChannel string
	Replaces       string
	Skips          []string
	SkipRange      string
	Force          bool
}

// planCatalog adds in's bundle to the catalog in dir (which may not exist)
// and validates the result. It writes nothing.
func planCatalog(ctx context.Context, dir string, in *input, edit catalogEdit) (*catalogPlan, error) {
	files, err := readCatalogDir(dir)
	if err != nil {
		return nil, err
	}
	rel, err := packageFile(ctx, dir, files, in.Package)
	if err != nil {
		return nil, err
	}
	plan := &catalogPlan{File: rel}
	cfg := &declcfg.DeclarativeConfig{}
	for _, f := range files {
		if f.Path == rel {
			plan.Before = f.Data
			if cfg, err = declcfg.LoadReader(bytes.NewReader(f.Data)); err != nil {
				return nil, fmt.Errorf("%s: %w", path.Join(dir, rel), err)
			}
		}
	}
	if err := addBundle(cfg, in, edit, plan); err != nil {
		return nil, fmt.Errorf("catalog %s: %w", dir, err)
	}
	var buf bytes.Buffer
	write := declcfg.WriteYAML
	if path.Ext(rel) == ".json" {
		write = declcfg.WriteJSON
	}
	if err := write(*cfg, &buf); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", rel, err)
	}
	plan.After = buf.Bytes()
	if plan.Before == nil || !bytes.Equal(plan.Before, plan.After) {
		files = replaceFile(files, file{Path: rel, Data: plan.After})
	}
	plan.Files = files
	mfs := fstest.MapFS{}
	for _, f := range files {
		mfs[f.Path] = &fstest.MapFile{Data: f.Data, Mode: 0o644}
	}
	if err := config.Validate(ctx, mfs); err != nil {
		return nil, fmt.Errorf("catalog %s would be invalid after adding %s: %w", dir, in.CSVName, err)
	}
	return plan, nil
}

// readCatalogDir reads every file of the catalog; a missing dir is empty.
func readCatalogDir(dir string) ([]file, error) {
	files, err := readTree(os.DirFS(dir))
	if errors.Is(err, fs.ErrNotExist) {
		if _, statErr := os.Stat(dir); errors.Is(statErr, fs.ErrNotExist) {
			return nil, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading catalog %s: %w", dir, err)
	}
	return files, nil
}

// packageFile returns the one file that holds pkg: an existing file that
// holds only pkg, else <pkg>/catalog.yaml.
func packageFile(ctx context.Context, dir string, files []file, pkg string) (string, error) {
	mfs := fstest.MapFS{}
	for _, f := range files {
		mfs[f.Path] = &fstest.MapFile{Data: f.Data}
	}
	var (
		mu     sync.Mutex
		holds  = map[string]bool{} // files with pkg's blobs
		shared = map[string]bool{} // files with other blobs
	)
	err := declcfg.WalkMetasFS(ctx, mfs, func(p string, m *declcfg.Meta, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", path.Join(dir, p), err)
		}
		owner := m.Package
		if m.Schema == declcfg.SchemaPackage {
			owner = m.Name
		}
		mu.Lock()
		defer mu.Unlock()
		if owner == pkg {
			holds[p] = true
		} else {
			shared[p] = true
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("reading catalog %s: %w", dir, err)
	}
	var paths []string
	for p := range holds {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	switch {
	case len(paths) == 0:
		return path.Join(pkg, "catalog.yaml"), nil
	case len(paths) > 1:
		return "", fmt.Errorf("catalog %s: package %s is spread over %s: keep it in one file, like %s", dir, pkg, strings.Join(paths, ", "), path.Join(pkg, "catalog.yaml"))
	case shared[paths[0]]:
		return "", fmt.Errorf("catalog %s: %s holds other packages besides %s: move %s into a file of its own, like %s", dir, paths[0], pkg, pkg, path.Join(pkg, "catalog.yaml"))
	}
	return paths[0], nil
}

func replaceFile(files []file, f file) []file {
	for i := range files {
		if files[i].Path == f.Path {
			files[i] = f
			return files
		}
	}
	files = append(files, f)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files
}

// addBundle edits cfg, which holds only in.Package.
func addBundle(cfg *declcfg.DeclarativeConfig, in *input, edit catalogEdit, plan *catalogPlan) error {
	b, err := renderBundle(in, edit.Image)
	if err != nil {
		return err
	}
	if len(cfg.Packages) == 0 {
		cfg.Packages = append(cfg.Packages, newPackage(in, edit))
	} else if edit.DefaultChannel != "" {
		cfg.Packages[0].DefaultChannel = edit.DefaultChannel
	}
	plan.DefaultChannel = cfg.Packages[0].DefaultChannel

	plan.Bundle = "added"
	for i, old := range cfg.Bundles {
		if old.Name == b.Name {
			same, err := sameBundle(old, b)
			if err != nil {
				return err
			}
			switch {
			case same:
				plan.Bundle = "unchanged"
			case !edit.Force:
				return fmt.Errorf("%s is already in the catalog with different content: publish a new version, or pass --force to overwrite it", b.Name)
			default:
				plan.Bundle = "replaced"
			}
			cfg.Bundles = append(cfg.Bundles[:i], cfg.Bundles[i+1:]...)
			break
		}
	}
	cfg.Bundles = append(cfg.Bundles, b)
	versions := fbc.Versions(cfg.Bundles)

	for _, name := range edit.Channels {
		ch := findChannel(cfg, name)
		if ch == nil {
			cfg.Channels = append(cfg.Channels, declcfg.Channel{Schema: declcfg.SchemaChannel, Name: name, Package: in.Package})
			ch = &cfg.Channels[len(cfg.Channels)-1]
		}
		if hasEntry(*ch, b.Name) {
			continue
		}
		entry, err := newEntry(*ch, cfg, in, edit, versions)
		if err != nil {
			return err
		}
		ch.Entries = append(ch.Entries, entry)
		plan.Changes = append(plan.Changes, ChannelChange{
			Channel: name, Entry: entry.Name, Replaces: entry.Replaces, Skips: entry.Skips,
			SkipRange: entry.SkipRange, NewChannel: len(ch.Entries) == 1,
		})
	}
	if plan.Bundle == "added" && len(plan.Changes) == 0 {
		return fmt.Errorf("%s would be in no channel: pass --channel", b.Name)
	}
	if problems := fbc.CheckPackage(cfg.Packages[0], cfg.Channels, versions); len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.Message
		}
		return fmt.Errorf("the upgrade graph of package %s would be invalid:\n  %s\nevery new bundle must replace or skip the channel head (--replaces auto does)", in.Package, strings.Join(msgs, "\n  "))
	}
	return nil
}

// newEntry makes the channel entry for the new bundle.
func newEntry(ch declcfg.Channel, cfg *declcfg.DeclarativeConfig, in *input, edit catalogEdit, versions map[string]semver.Version) (declcfg.ChannelEntry, error) {
	e := declcfg.ChannelEntry{Name: in.CSVName, Skips: edit.Skips, SkipRange: edit.SkipRange}
	switch edit.Replaces {
	case "", ReplacesAuto:
		heads := fbc.Heads(ch)
		if len(heads) > 1 {
			return e, fmt.Errorf("channel %s already has %d heads (%s): fix the catalog first", ch.Name, len(heads), strings.Join(heads, ", "))
		}
		if len(heads) == 1 {
			if hv, ok := versions[heads[0]]; ok && !in.Version.GT(hv) {
				return e, fmt.Errorf("channel %s: %s (version %s) is not newer than the channel head %s (version %s): publish a higher version, or name the edge with --replaces", ch.Name, in.CSVName, in.Version, heads[0], hv)
			}
			if !slices.Contains(e.Skips, heads[0]) {
				e.Replaces = heads[0]
			}
		}
	case ReplacesNone:
	default:
		if edit.Replaces == in.CSVName || !hasBundle(cfg, edit.Replaces) {
			return e, fmt.Errorf("--replaces %s: the catalog has no earlier bundle %s in package %s (it has %s)", edit.Replaces, edit.Replaces, in.Package, bundleNames(cfg, in.CSVName))
		}
		if !hasEntry(ch, edit.Replaces) {
			return e, fmt.Errorf("--replaces %s: %s is not in channel %s", edit.Replaces, edit.Replaces, ch.Name)
		}
		e.Replaces = edit.Replaces
	}
	return e, nil
}

// renderBundle makes the olm.bundle blob, as `opm render` of the bundle
// directory would, with image as its image.
func renderBundle(in *input, image string) (declcfg.Bundle, error) {
	objs, props, err := registry.ObjectsAndPropertiesFromBundle(in.Bundle)
	if err != nil {
		return declcfg.Bundle{}, fmt.Errorf("rendering bundle %s: %w", in.BundleDir, err)
	}
	// Bundle objects last, as opm render orders them.
	sort.SliceStable(props, func(i, j int) bool {
		return props[i].Type != property.TypeBundleObject && props[j].Type == property.TypeBundleObject
	})
	b := declcfg.Bundle{Schema: declcfg.SchemaBundle, Name: in.CSVName, Package: in.Package, Image: image, Properties: props, Objects: objs}
	csv, err := in.Bundle.ClusterServiceVersion()
	if err != nil {
		return b, fmt.Errorf("reading the CSV of %s: %w", in.BundleDir, err)
	}
	var spec struct {
		RelatedImages []declcfg.RelatedImage `json:"relatedImages"`
	}
	if err := json.Unmarshal(csv.Spec, &spec); err != nil {
		return b, fmt.Errorf("reading spec.relatedImages of the CSV in %s: %w", in.BundleDir, err)
	}
	b.RelatedImages = spec.RelatedImages
	if image != "" {
		b.RelatedImages = append(b.RelatedImages, declcfg.RelatedImage{Name: "bundle", Image: image})
	}
	return b, nil
}

func newPackage(in *input, edit catalogEdit) declcfg.Package {
	p := declcfg.Package{Schema: declcfg.SchemaPackage, Name: in.Package, DefaultChannel: edit.DefaultChannel}
	if p.DefaultChannel == "" && len(edit.Channels) > 0 {
		p.DefaultChannel = edit.Channels[0]
	}
	if icons, err := in.Bundle.Icons(); err == nil && len(icons) > 0 {
		p.Icon = &declcfg.Icon{Data: icons[0].Base64data, MediaType: icons[0].MediaType}
	}
	if d, err := in.Bundle.Description(); err == nil {
		p.Description = d
	}
	return p
}

// sameBundle compares two bundle blobs by their canonical JSON.
func sameBundle(a, b declcfg.Bundle) (bool, error) {
	x, err := canonicalJSON(a)
	if err != nil {
		return false, err
	}
	y, err := canonicalJSON(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(x, y), nil
}

func canonicalJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return nil, err
	}
	return json.Marshal(generic)
}

func findChannel(cfg *declcfg.DeclarativeConfig, name string) *declcfg.Channel {
	for i := range cfg.Channels {
		if cfg.Channels[i].Name == name {
			return &cfg.Channels[i]
		}
	}
	return nil
}

func hasEntry(ch declcfg.Channel, name string) bool {
	for _, e := range ch.Entries {
		if e.Name == name {
			return true
		}
	}
	return false
}

func hasBundle(cfg *declcfg.DeclarativeConfig, name string) bool {
	for _, b := range cfg.Bundles {
		if b.Name == name {
			return true
		}
	}
	return false
}

// bundleNames lists the catalog's bundles but skip.
func bundleNames(cfg *declcfg.DeclarativeConfig, skip string) string {
	var names []string
	for _, b := range cfg.Bundles {
		if b.Name != skip {
			names = append(names, b.Name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
