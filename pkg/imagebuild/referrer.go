package imagebuild

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// emptyConfig is the OCI 1.1 empty descriptor's content, the config of an
// artifact that has none.
var emptyConfig = []byte("{}")

const emptyConfigType = "application/vnd.oci.empty.v1+json"

// SBOMArtifact is the OCI 1.1 artifact carrying sbom that refers to
// subject (the image index): artifactType application/spdx+json, the
// empty config, one blob. Pushed with remote.Write, it is listed by the
// registry's referrers API, or, where the registry has none, in the
// sha256-<hex> fallback tag go-containerregistry maintains.
func SBOMArtifact(subject v1.Descriptor, sbom []byte) (v1.Image, error) {
	blob := blobOf(sbom, SBOMMediaType)
	cfg := blobOf(emptyConfig, emptyConfigType)
	m := v1.Manifest{
		SchemaVersion: 2, MediaType: types.OCIManifestSchema1, ArtifactType: SBOMMediaType,
		Config:      cfg.desc,
		Layers:      []v1.Descriptor{blob.desc},
		Subject:     &v1.Descriptor{MediaType: subject.MediaType, Digest: subject.Digest, Size: subject.Size},
		Annotations: map[string]string{"org.opencontainers.image.title": "sbom.spdx.json"},
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return partial.CompressedToImage(&artifact{manifest: raw, blobs: []staticBlob{cfg, blob}})
}

type staticBlob struct {
	data []byte
	desc v1.Descriptor
}

func blobOf(b []byte, mt types.MediaType) staticBlob {
	h, n, _ := v1.SHA256(bytes.NewReader(b))
	return staticBlob{data: b, desc: v1.Descriptor{MediaType: mt, Digest: h, Size: n}}
}

// artifact is a manifest with its blobs, as partial.CompressedImageCore.
type artifact struct {
	manifest []byte
	blobs    []staticBlob // config first
}

func (a *artifact) RawConfigFile() ([]byte, error)      { return a.blobs[0].data, nil }
func (a *artifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (a *artifact) RawManifest() ([]byte, error)        { return a.manifest, nil }

func (a *artifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	for _, b := range a.blobs {
		if b.desc.Digest == h {
			return &compressedBlob{b}, nil
		}
	}
	return nil, fmt.Errorf("artifact has no blob %s", h)
}

type compressedBlob struct{ staticBlob }

func (b *compressedBlob) Digest() (v1.Hash, error) { return b.desc.Digest, nil }
func (b *compressedBlob) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(b.data)), nil
}
func (b *compressedBlob) Size() (int64, error)                { return b.desc.Size, nil }
func (b *compressedBlob) MediaType() (types.MediaType, error) { return b.desc.MediaType, nil }
