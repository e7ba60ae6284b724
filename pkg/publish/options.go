package publish

import (
	"errors"
	"io"
	"os"
	"strconv"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"opctl.dev/opctl/pkg/imagebuild"
	"opctl.dev/opctl/pkg/packaging"
)

// Options configure Publish.
type Options struct {
	// Registry is HOST[:PORT]/PATH; images go to PATH/<name>-bundle and
	// PATH/<name>-catalog, the chart to PATH/charts/<name>.
	Registry string
	// Name picks the package when the directory holds several.
	Name string

	// CatalogDir is the file-based catalog to add the bundle to, created if
	// missing. Empty: no catalog.
	CatalogDir string
	// CatalogTag tags the catalog image (default "latest").
	CatalogTag string
	// Channels to add the bundle to (default: the bundle's channels).
	Channels []string
	// DefaultChannel sets the package's default channel (default: kept,
	// or the bundle's for a new package).
	DefaultChannel string
	// Replaces is "auto" (each channel's head, the default), "none", or a
	// bundle name.
	Replaces string
	// Skips and SkipRange default to the CSV's spec.skips and
	// olm.skipRange annotation.
	Skips     []string
	SkipRange string
	// ImageLess writes the catalog's bundle entry with an empty image, so
	// OLM reads the bundle from the catalog's olm.bundle.object properties
	// instead of unpacking the image (air-gapped and test clusters).
	ImageLess bool

	// ChartRepoDir, when set, also receives the chart .tgz and an updated
	// index.yaml for a classic HTTP chart repository served at ChartRepoURL.
	ChartRepoDir string
	ChartRepoURL string

	// Insecure allows plain HTTP and skips TLS verification.
	Insecure bool
	// CAFile adds a CA to trust for the registry's TLS certificate.
	CAFile string
	// Username and Password authenticate; without them the Docker and Helm
	// credential stores are used.
	Username string
	Password string

	// DryRun reports what would be pushed and changed, and changes nothing.
	DryRun bool
	// Force overwrites a published version whose content differs.
	Force bool

	// Source is the operator project to package into the directory first
	// and to build the manager's image of. Empty: the directory is
	// published as opctl package left it, with no image.
	Source string
	// Package are the options of packaging Source (Out and Builder are
	// set by Publish).
	Package packaging.PackageOptions
	// SkipImage packages Source but builds no image.
	SkipImage bool
	// Base is the image to build the manager on; empty means scratch with
	// a CA bundle and a nonroot user.
	Base string
	// Platforms to build (default linux/amd64 and linux/arm64).
	Platforms []v1.Platform
	// CABundle is a PEM file put in the scratch base instead of the NSS
	// roots pinned in go.sum.
	CABundle string

	// Progress receives one line per step; nil discards them.
	Progress io.Writer
	// Created stamps every artifact. Zero: $SOURCE_DATE_EPOCH, else the
	// Unix epoch, so that artifacts are reproducible.
	Created time.Time
}

func (o *Options) defaults() error {
	if o.Username != "" && o.Password == "" {
		return errors.New("--username needs a password: pipe it to --password-stdin")
	}
	if o.Username == "" && o.Password != "" {
		return errors.New("a password was given without --username")
	}
	if o.CatalogTag == "" {
		o.CatalogTag = "latest"
	}
	if o.Replaces == "" {
		o.Replaces = ReplacesAuto
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Created.IsZero() {
		o.Created = time.Unix(0, 0).UTC()
		if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
			sec, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return errors.New("SOURCE_DATE_EPOCH must be a number of seconds")
			}
			o.Created = time.Unix(sec, 0).UTC()
		}
	}
	return nil
}

func (o *Options) platforms() []v1.Platform {
	if len(o.Platforms) == 0 {
		return imagebuild.DefaultPlatforms
	}
	return o.Platforms
}
