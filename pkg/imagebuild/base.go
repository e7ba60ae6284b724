package imagebuild

import (
	"fmt"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"opctl.dev/opctl/internal/ocilayer"
)

// caBundlePath is where Go's crypto/x509 looks first on Linux.
const caBundlePath = "etc/ssl/certs/ca-certificates.crt"

// base is what every platform's image is built on.
type base struct {
	// Ref is the base as given, Digest what it resolved to; both empty
	// for scratch.
	Ref, Digest string
	// CADigest is the digest of the CA bundle put in a scratch base.
	CADigest string
	ref      name.Digest
	scratch  v1.Layer
	opts     []remote.Option
}

// resolveBase resolves o.Base to a digest, or builds the scratch layer.
func resolveBase(o *Options) (*base, error) {
	if o.Base == "" {
		ca := o.CABundle
		if ca == nil {
			ca = DefaultCABundle()
		}
		l, err := ocilayer.Layer("", scratchFiles(ca), o.Created)
		if err != nil {
			return nil, err
		}
		return &base{scratch: l, CADigest: Digest(ca)}, nil
	}
	ref, err := name.ParseReference(o.Base)
	if err != nil {
		return nil, fmt.Errorf("--base %q: %w", o.Base, err)
	}
	desc, err := remote.Head(ref, o.Remote...)
	if err != nil {
		return nil, fmt.Errorf("--base %s: resolving it to a digest: %w", o.Base, err)
	}
	d := ref.Context().Digest(desc.Digest.String())
	return &base{Ref: o.Base, Digest: d.String(), ref: d, opts: o.Remote}, nil
}

// scratchFiles are the files of the scratch base: the CA bundle, and a
// passwd and group naming root and nonroot.
func scratchFiles(ca []byte) []ocilayer.File {
	uid := strconv.Itoa(NonRootUID)
	return []ocilayer.File{
		{Path: "etc/group", Data: []byte("root:x:0:\nnonroot:x:" + uid + ":\n")},
		{Path: "etc/passwd", Data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:" + uid + ":" + uid + ":nonroot:/home/nonroot:/sbin/nologin\n")},
		{Path: caBundlePath, Data: ca},
	}
}

// image is the base image for platform p.
func (b *base) image(p v1.Platform, created time.Time) (v1.Image, error) {
	if b.scratch == nil {
		img, err := remote.Image(b.ref, append(b.opts, remote.WithPlatform(p))...)
		if err != nil {
			return nil, fmt.Errorf("base %s for %s: %w", b.Digest, p.String(), err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		if cfg.OS != p.OS || cfg.Architecture != p.Architecture {
			return nil, fmt.Errorf("base %s has no %s image (it gave %s/%s): pick a base built for every --platform", b.Ref, p.String(), cfg.OS, cfg.Architecture)
		}
		return img, nil
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	return mutate.Append(img, mutate.Addendum{
		Layer: b.scratch, MediaType: types.OCILayer,
		History: v1.History{CreatedBy: "opctl: CA bundle, /etc/passwd and /etc/group (nonroot " + strconv.Itoa(NonRootUID) + ")", Created: v1.Time{Time: created}},
	})
}
