package publish

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"opctl.dev/opctl/pkg/imagebuild"
	"opctl.dev/opctl/pkg/packaging"
)

// ImageResult says how the manager's image was made, or why it was not.
type ImageResult struct {
	// Skipped says why no image was built; the other fields are then empty.
	Skipped string `json:"skipped,omitempty"`
	// Main is the main package built, relative to the project, and
	// MainFrom how it was found.
	Main     string `json:"main,omitempty"`
	MainFrom string `json:"mainFrom,omitempty"`
	// Binary is the program's path in the image.
	Binary    string   `json:"binary,omitempty"`
	Platforms []string `json:"platforms,omitempty"`
	// Base and BaseDigest name the base ("" for scratch); CADigest is
	// the scratch base's CA bundle.
	Base       string `json:"base,omitempty"`
	BaseDigest string `json:"baseDigest,omitempty"`
	CADigest   string `json:"caBundleDigest,omitempty"`
	GoVersion  string `json:"goVersion,omitempty"`
	// Modules counts the Go modules linked; SBOM is the digest reference
	// of the SPDX artifact that refers to the image.
	Modules int    `json:"modules,omitempty"`
	SBOM    string `json:"sbom,omitempty"`
}

// managerBuilder builds the manager's image while opctl package runs on
// the source, and plans its push: Package names the image by the digest
// it will have once pushed.
type managerBuilder struct {
	t        *target
	opts     *Options
	artifact *imageArtifact
	result   *ImageResult
}

// BuildManager builds the image of src's manager and plans it as
// <registry>/<image name>:<version>.
func (b *managerBuilder) BuildManager(ctx context.Context, src packaging.ManagerSource) (string, error) {
	if src.Main == "" {
		return "", fmt.Errorf("%s: no main package of the manager found (the Dockerfile's go build, cmd/main.go, main.go): set main in opctl.yaml to its directory, or pass --skip-image", src.Dir)
	}
	binary := "/manager"
	if len(src.Command) > 0 {
		binary = src.Command[0]
		if !strings.Contains(binary, "/") {
			binary = "/" + binary // PATH is / in the scratch base
		}
		if !path.IsAbs(binary) {
			return "", fmt.Errorf("%s: the manager's command %q is a relative path: make it absolute (like /manager), where the image will hold the program", src.Dir, src.Command[0])
		}
	}
	ca, err := b.caBundle()
	if err != nil {
		return "", err
	}
	labels := map[string]string{"org.opencontainers.image.version": src.Version, "org.opencontainers.image.title": src.Name}
	if src.Source != "" {
		labels["org.opencontainers.image.source"] = src.Source
	}
	if rev := revision(ctx, src.Dir); rev != "" {
		labels["org.opencontainers.image.revision"] = rev
	}
	built, err := imagebuild.Build(ctx, imagebuild.Options{
		Dir: src.Dir, Main: "./" + strings.TrimPrefix(src.Main, "./"), Binary: binary, Platforms: b.opts.Platforms,
		Base: b.opts.Base, CABundle: ca, Labels: labels, Created: b.opts.Created, Remote: b.t.remoteOptions(ctx),
		Progress: b.opts.Progress,
	})
	if err != nil {
		return "", err
	}
	dest := b.t.Repo(imageName(src)) + ":" + src.Version
	a, err := b.t.plan(ctx, "image", dest, built.Index, b.opts.Force, true)
	if err != nil {
		return "", err
	}
	desc, err := describe(built.Index)
	if err != nil {
		return "", err
	}
	sbom, err := imagebuild.SBOMArtifact(desc, built.SBOM)
	if err != nil {
		return "", err
	}
	a.referrers = []v1.Image{sbom}
	sd, err := sbom.Digest()
	if err != nil {
		return "", err
	}
	b.artifact = a
	b.result = &ImageResult{Main: src.Main, MainFrom: src.MainFrom, Binary: binary, Base: built.Base, BaseDigest: built.BaseDigest,
		CADigest: built.CADigest, GoVersion: built.GoVersion, Modules: len(built.Modules), SBOM: a.tagRef.Context().Name() + "@" + sd.String()}
	for _, p := range b.opts.platforms() {
		b.result.Platforms = append(b.result.Platforms, p.String())
	}
	return a.digestRef(), nil
}

// caBundle reads --ca-bundle; nil means the pinned default.
func (b *managerBuilder) caBundle() ([]byte, error) {
	if b.opts.CABundle == "" {
		return nil, nil
	}
	ca, err := os.ReadFile(b.opts.CABundle)
	if err != nil {
		return nil, fmt.Errorf("--ca-bundle: %w", err)
	}
	if err := imagebuild.CheckCABundle(b.opts.CABundle, ca); err != nil {
		return nil, fmt.Errorf("--ca-bundle: %w", err)
	}
	return ca, nil
}

// imageName is the repository's last element of the manager's image, the
// package's name when the overlay names none usable.
func imageName(src packaging.ManagerSource) string {
	if ref, err := name.ParseReference(src.Image); err == nil && src.Image != "controller:latest" {
		if n := path.Base(ref.Context().RepositoryStr()); n != "" && n != "controller" {
			return n
		}
	}
	return src.Name
}

// describe is the descriptor a referrer's subject names.
func describe(o ociObject) (v1.Descriptor, error) {
	d, err := o.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	raw, err := o.RawManifest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	mt, err := o.MediaType()
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mt, Digest: d, Size: int64(len(raw))}, nil
}

// revision is the commit of dir's git work tree, with -dirty when it has
// changes; "" outside one or without git.
func revision(ctx context.Context, dir string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "describe", "--always", "--dirty", "--abbrev=40", "--match=^$").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
