package registryv1

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"opctl.dev/opctl/pkg/tenancy/internal/guard"
)

// BundleContent is a bundle's objects and where they came from.
type BundleContent struct {
	Objects []*unstructured.Unstructured
	// Image is the bundle image, by digest when it was read or the
	// catalog named it so.
	Image string
}

// Content returns a bundle's objects: from the catalog's
// olm.bundle.object properties, else from the manifests/ directory of
// the bundle image in its registry (pullBundle keeps what it pulled).
func (f *FBCCatalogs) Content(ctx context.Context, b *declcfg.Bundle) (*BundleContent, error) {
	if len(b.Objects) > 0 { // declcfg decodes the olm.bundle.object properties
		return f.parse(b)
	}
	if b.Image == "" {
		return nil, fmt.Errorf("bundle %s: the catalog carries neither its objects nor its image", b.Name)
	}
	return f.pullBundle(ctx, b)
}

// maxParsed bounds the bundles whose objects are kept parsed.
const maxParsed = 64

// parse reads a bundle's objects from the catalog once for every tenant
// and reconcile: by a hash of its name, image and objects, as a catalog
// read again holds new copies of the same bundles. Renders copy what
// they change.
func (f *FBCCatalogs) parse(b *declcfg.Bundle) (*BundleContent, error) {
	h := sha256.New()
	for _, s := range append([]string{b.Name, b.Image}, b.Objects...) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	key := hex.EncodeToString(h.Sum(nil))
	f.mu.Lock()
	c, ok := f.parsed[key]
	f.mu.Unlock()
	if ok {
		return c, nil
	}
	objs, err := ReadDocs(b.Name, b.Objects)
	if err != nil {
		return nil, err
	}
	c = &BundleContent{Objects: objs, Image: b.Image}
	f.mu.Lock()
	if len(f.parsed) >= maxParsed {
		clear(f.parsed)
	}
	f.parsed[key] = c
	f.mu.Unlock()
	return c, nil
}

// pullBundle reads a registry+v1 bundle image (one object per file under
// manifests/), once per digest-pinned image, and once per poll interval
// for a tag.
func (f *FBCCatalogs) pullBundle(ctx context.Context, b *declcfg.Bundle) (*BundleContent, error) {
	f.mu.Lock()
	p, ok := f.pulled[b.Image]
	f.mu.Unlock()
	if ok && (digestOf(b.Image) != "" || time.Since(p.at) < f.ttl) {
		return p.content, nil
	}
	c, err := f.pull(ctx, b)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.pulled[b.Image] = pulledBundle{content: c, at: time.Now()}
	f.mu.Unlock()
	return c, nil
}

func (f *FBCCatalogs) pull(ctx context.Context, b *declcfg.Bundle) (*BundleContent, error) {
	ref, err := name.ParseReference(b.Image, f.nameOptions()...)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: image %s: %w", b.Name, b.Image, err)
	}
	desc, err := remote.Get(ref, remote.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("bundle %s: pulling %s: %w", b.Name, b.Image, err)
	}
	img, err := desc.Image()
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %s: %w", b.Name, b.Image, err)
	}
	files, err := imageFiles(img, "manifests", maxBundleBytes)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %s: %w", b.Name, b.Image, err)
	}
	docs, _ := manifestDocs(files)
	if len(docs) == 0 {
		return nil, fmt.Errorf("bundle %s: image %s has no manifests/", b.Name, b.Image)
	}
	objs, err := ReadDocs(b.Name, docs)
	return &BundleContent{Objects: objs, Image: ref.Context().Digest(desc.Digest.String()).String()}, err
}

// maxBundleBytes bounds the manifests of one bundle image: OLM keeps a
// bundle in one ConfigMap (1 MiB, compressed), so a real bundle's
// manifests are a few MiB at most.
const maxBundleBytes = 32 << 20

// MaxBundleDocs bounds the documents of one bundle: a bundle holds a CSV,
// its CRDs and a few more objects, and every parsed document costs
// memory far beyond its bytes ("a: 1\n---\n" is 9 bytes).
const MaxBundleDocs = 2000

// manifestDocs are the YAML and JSON files of a bundle's manifests/, in
// path order, and their paths.
func manifestDocs(files map[string][]byte) (docs, paths []string) {
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if ext := path.Ext(p); ext == ".yaml" || ext == ".yml" || ext == ".json" {
			docs = append(docs, string(files[p]))
			paths = append(paths, p)
		}
	}
	return docs, paths
}

// ReadDocs parses YAML or JSON documents into objects, refusing more than
// maxBundleDocs of them before parsing any.
func ReadDocs(bundle string, docs []string) ([]*unstructured.Unstructured, error) {
	if err := countDocs(bundle, docs); err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, doc := range docs {
		for _, d := range guard.ManifestDocs(doc) {
			if d.Err != nil {
				return nil, fmt.Errorf("bundle %s: reading an object: %w", bundle, d.Err)
			}
			if d.Obj != nil {
				objs = append(objs, d.Obj)
			}
		}
	}
	return objs, nil
}

// countDocs refuses more than MaxBundleDocs documents in docs.
func countDocs(bundle string, docs []string) error {
	n := 0
	for _, doc := range docs {
		if n += strings.Count(doc, "\n---") + 1; n > MaxBundleDocs {
			return fmt.Errorf("bundle %s: more than %d YAML documents in manifests/: refusing to read it (a bundle holds a CSV, its CRDs and a few more objects)", bundle, MaxBundleDocs)
		}
	}
	return nil
}

// digestOf is the digest part of an image reference, or "".
func digestOf(image string) string {
	if _, d, ok := strings.Cut(image, "@"); ok {
		return d
	}
	return ""
}
