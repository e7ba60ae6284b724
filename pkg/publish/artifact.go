package publish

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// ociObject is an image or an image index.
type ociObject interface {
	remote.Taggable
	Digest() (v1.Hash, error)
	MediaType() (types.MediaType, error)
}

// imageArtifact is an image or index and what publish will do with its
// tag; referrers (an SBOM) are pushed after it and refer to it.
type imageArtifact struct {
	Artifact
	obj       ociObject
	tagRef    name.Tag
	referrers []v1.Image
}

func (a *imageArtifact) digestRef() string {
	return a.tagRef.Context().Name() + "@" + a.Digest
}

// plan compares the image with what the tag holds. A tag holding other
// content is a conflict unless mutable (catalog tags move) or forced.
func (t *target) plan(ctx context.Context, kind, ref string, img ociObject, force, immutable bool) (*imageArtifact, error) {
	tag, err := name.NewTag(ref, t.nameOptions()...)
	if err != nil {
		return nil, fmt.Errorf("%s reference %s: %w", kind, ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	a := &imageArtifact{Artifact: Artifact{Kind: kind, Ref: tag.String(), Digest: digest.String(), Size: objectSize(img)}, obj: img, tagRef: tag}
	have, err := t.head(ctx, tag)
	switch {
	case err != nil:
		return nil, err
	case have == nil:
		a.Action = ActionPushed
	case have.Digest == digest:
		a.Action = ActionUnchanged
	case immutable && !force:
		return nil, fmt.Errorf("%s is already published with different content (%s, this build is %s): publish a new version, or pass --force to overwrite it", tag, have.Digest, digest)
	case immutable:
		a.Action = ActionForced
	default:
		a.Action = ActionPushed
	}
	return a, nil
}

// objectSize is the bytes an image's config and layers take, or the sum
// of an index's images.
func objectSize(o ociObject) int64 {
	switch o := o.(type) {
	case v1.Image:
		m, err := o.Manifest()
		if err != nil {
			return 0
		}
		n := m.Config.Size
		for _, l := range m.Layers {
			n += l.Size
		}
		return n
	case v1.ImageIndex:
		m, err := o.IndexManifest()
		if err != nil {
			return 0
		}
		var n int64
		for _, d := range m.Manifests {
			if img, err := o.Image(d.Digest); err == nil {
				n += objectSize(img)
			}
		}
		return n
	}
	return 0
}

func size(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
