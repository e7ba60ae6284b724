package packaging

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// DigestResolver resolves an image reference to the digest it points at.
type DigestResolver interface {
	Digest(ctx context.Context, image string) (string, error)
}

// RegistryResolver asks the image's registry, with the credentials of the
// local Docker config. Registries on localhost speak plain HTTP.
type RegistryResolver struct{}

// Digest returns the digest of image's manifest (or index).
func (RegistryResolver) Digest(ctx context.Context, image string) (string, error) {
	ref, err := name.ParseReference(image)
	if err != nil {
		return "", err
	}
	desc, err := remote.Head(ref, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return "", err
	}
	return desc.Digest.String(), nil
}

// PinDigests replaces every image of the project (the manager's, its
// operand images in env values and flags, those of extra objects and
// samples) with
// repository@digest. An image that cannot be resolved is an error.
func (p *Project) PinDigests(ctx context.Context, r DigestResolver, progress io.Writer) error {
	pinned := map[string]string{}
	for _, img := range p.RelatedImages() {
		if strings.Contains(img.Image, "@") {
			continue
		}
		fmt.Fprintf(progress, "resolving %s (%s)\n", img.Image, img.Name)
		d, err := r.Digest(ctx, img.Image)
		if err != nil {
			return fmt.Errorf("--pin-digests: cannot resolve image %s (%s) to a digest: %w; check that it exists and the registry is reachable, or drop --pin-digests", img.Image, img.Name, err)
		}
		repo, _, _ := splitImage(img.Image)
		pinned[img.Image] = repo + "@" + d
	}
	return p.replaceImages(pinned)
}

// replaceStrings replaces every string value of v found in m.
func replaceStrings(v any, m map[string]string) {
	replace := func(e any, set func(string)) {
		if s, ok := e.(string); ok {
			if r, ok := m[s]; ok {
				set(r)
			} else if flag, v, ok := strings.Cut(s, "="); ok && strings.HasPrefix(flag, "--") {
				if r, ok := m[v]; ok { // an operand image flag
					set(flag + "=" + r)
				}
			}
			return
		}
		replaceStrings(e, m)
	}
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			replace(e, func(r string) { t[k] = r })
		}
	case []any:
		for i, e := range t {
			replace(e, func(r string) { t[i] = r })
		}
	}
}
