package imagebuild

import (
	"fmt"
	"io"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Options say what to build.
type Options struct {
	// Dir is the directory go build runs in (the project's, inside its
	// module); Main the main package relative to it ("./cmd").
	Dir, Main string
	// Binary is the path of the program in the image, where the
	// Deployment's command points ("/manager").
	Binary string
	// Platforms to build; default linux/amd64 and linux/arm64.
	Platforms []v1.Platform
	// Base is an image reference to build on; empty means scratch with
	// the CA bundle and passwd files.
	Base string
	// CABundle is the PEM bundle put in a scratch base; nil means the NSS
	// roots of golang.org/x/crypto/x509roots/fallback.
	CABundle []byte
	// Labels are set on every image's config (OCI annotations keys).
	Labels map[string]string
	// Created stamps configs, layers and the SBOM.
	Created time.Time
	// Go is the go command; default "go" from PATH.
	Go string
	// Remote are options for reading Base from its registry.
	Remote []remote.Option
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
}

// DefaultPlatforms are built when Options.Platforms is empty.
var DefaultPlatforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// NonRootUID is the user the image runs as (distroless's nonroot).
const NonRootUID = 65532

// ParsePlatforms reads a comma-separated list like
// linux/amd64,linux/arm64,linux/arm/v7.
func ParsePlatforms(s string) ([]v1.Platform, error) {
	var out []v1.Platform
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := v1.ParsePlatform(f)
		if err != nil || p.OS != "linux" || p.Architecture == "" {
			return nil, fmt.Errorf("--platform %q: want linux/ARCH[/VARIANT], like linux/amd64", f)
		}
		if _, ok := goArch[p.Architecture]; !ok {
			return nil, fmt.Errorf("--platform %q: architecture %s is not one Go builds for here (%s)", f, p.Architecture, strings.Join(goArchNames(), ", "))
		}
		if seen[p.String()] {
			continue
		}
		seen[p.String()] = true
		out = append(out, *p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--platform is empty: name at least one, like linux/amd64")
	}
	return out, nil
}

func (o *Options) defaults() error {
	if len(o.Platforms) == 0 {
		o.Platforms = DefaultPlatforms
	}
	if o.Binary == "" {
		o.Binary = "/manager"
	}
	if !strings.HasPrefix(o.Binary, "/") {
		return fmt.Errorf("the program's path in the image must be absolute, got %q (the Deployment's command)", o.Binary)
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Main == "" {
		o.Main = "."
	}
	return nil
}
