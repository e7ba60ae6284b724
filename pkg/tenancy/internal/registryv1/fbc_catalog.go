package registryv1

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

// maxCatalogBytes bounds what the controller reads of one catalog (an
// image's configs, an HTTP body): a catalog is the platform's input, but
// a broken one must not exhaust the controller's memory.
const maxCatalogBytes = 256 << 20

// catalogConfigsLabel names the directory of a catalog image that holds
// its file-based catalog, as opm and opctl publish set it.
const catalogConfigsLabel = "operators.operatorframework.io.index.configs.v1"

// FBCCatalogs reads file-based catalogs for the bundle backend from the
// four kinds of source, and keeps each for the poll interval (an image by
// its digest, so a pushed catalog is read again at once).
type FBCCatalogs struct {
	mu        sync.Mutex
	loaded    map[string]loadedCatalog
	pulled    map[string]pulledBundle   // by bundle image
	parsed    map[string]*BundleContent // by content hash (parse)
	plainHTTP bool
	grpc      *CatalogClient
	reader    client.Reader
	http      *http.Client
	ttl       time.Duration
}

type pulledBundle struct {
	content *BundleContent
	at      time.Time
}

type loadedCatalog struct {
	cfg    *declcfg.DeclarativeConfig
	digest string
	at     time.Time
}

func NewFBCCatalogs(reader client.Reader, grpc *CatalogClient, plainHTTP bool, ttl time.Duration) *FBCCatalogs {
	return &FBCCatalogs{loaded: map[string]loadedCatalog{}, pulled: map[string]pulledBundle{}, parsed: map[string]*BundleContent{}, plainHTTP: plainHTTP, grpc: grpc, reader: reader,
		http: &http.Client{Timeout: 60 * time.Second}, ttl: ttl}
}

// BundleSourceString names a bundle catalog for allowedSources and in
// messages.
func BundleSourceString(c tenancyv1.BundleCatalog) string {
	switch {
	case c.Image != "":
		return c.Image
	case c.Address != "":
		return c.Address
	case c.URL != "":
		return c.URL
	case c.ConfigMap != nil:
		return "configmap:" + c.ConfigMap.Namespace + "/" + c.ConfigMap.Name
	}
	return ""
}

// Load returns the catalog of src.
func (f *FBCCatalogs) Load(ctx context.Context, src tenancyv1.BundleCatalog, tenantNamespaces []string) (*declcfg.DeclarativeConfig, error) {
	key := BundleSourceString(src)
	f.mu.Lock()
	l, ok := f.loaded[key]
	f.mu.Unlock()
	if ok && time.Since(l.at) < f.ttl {
		return l.cfg, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var cfg *declcfg.DeclarativeConfig
	var digest string
	var err error
	switch {
	case src.Image != "":
		ref, rerr := name.ParseReference(src.Image, f.nameOptions()...)
		if rerr != nil {
			return nil, fmt.Errorf("catalog image %s: %w", src.Image, rerr)
		}
		desc, herr := remote.Head(ref, remote.WithContext(ctx))
		if herr != nil {
			return nil, fmt.Errorf("catalog image %s: %w", src.Image, herr)
		}
		digest = desc.Digest.String()
		if ok && l.digest == digest {
			l.at = time.Now()
			f.store(key, l)
			return l.cfg, nil
		}
		cfg, err = f.image(ctx, ref.Context().Digest(digest))
	case src.Address != "":
		cfg, err = f.grpc.listing(ctx, src.Address)
	case src.URL != "":
		cfg, err = f.url(ctx, src.URL)
	case src.ConfigMap != nil:
		cfg, err = f.configMap(ctx, *src.ConfigMap, tenantNamespaces)
	default:
		return nil, errors.New("the catalog names no source: set one of image, address, url and configMap")
	}
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", key, err)
	}
	f.store(key, loadedCatalog{cfg: cfg, digest: digest, at: time.Now()})
	return cfg, nil
}

func (f *FBCCatalogs) store(key string, l loadedCatalog) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loaded[key] = l
}

func (f *FBCCatalogs) nameOptions() []name.Option {
	if f.plainHTTP {
		return []name.Option{name.Insecure}
	}
	return nil
}

// image reads the file-based catalog under the image's configs label.
func (f *FBCCatalogs) image(ctx context.Context, ref name.Reference) (*declcfg.DeclarativeConfig, error) {
	img, err := remote.Image(ref, remote.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the image config: %w", err)
	}
	dir := "configs"
	if d := cf.Config.Labels[catalogConfigsLabel]; d != "" {
		dir = strings.Trim(path.Clean(d), "/")
	}
	files, err := imageFiles(img, dir, maxCatalogBytes)
	if err != nil {
		return nil, err
	}
	if len(catalogFiles(files)) == 0 {
		return nil, fmt.Errorf("the image has no catalog files under /%s (label %s)", dir, catalogConfigsLabel)
	}
	return loadFiles(files)
}

// catalogFiles drops from files what is not a catalog file (YAML or
// JSON), and returns them.
func catalogFiles(files map[string][]byte) map[string][]byte {
	for p := range files {
		if ext := path.Ext(p); ext != ".json" && ext != ".yaml" && ext != ".yml" {
			delete(files, p)
		}
	}
	return files
}

// imageFiles returns the regular files under dir (and, with dir "",
// every file) of the image's flattened file system, by path, refusing
// more than limit bytes of them. Other files are streamed past, not held.
func imageFiles(img v1.Image, dir string, limit int) (map[string][]byte, error) {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	files, total := map[string][]byte{}, 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the image layers: %w", err)
		}
		p := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if h.Typeflag != tar.TypeReg || (dir != "" && !strings.HasPrefix(p, dir+"/")) {
			continue
		}
		if total += int(h.Size); total > limit {
			return nil, fmt.Errorf("the files under /%s are larger than %d MiB", dir, limit>>20)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		files[p] = b
	}
}

// loadFiles parses catalog files, in path order, into one catalog.
func loadFiles(files map[string][]byte) (*declcfg.DeclarativeConfig, error) {
	out := &declcfg.DeclarativeConfig{}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		cfg, err := declcfg.LoadReader(bytes.NewReader(files[p]))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		merge(out, cfg)
	}
	return out, nil
}

func merge(dst, src *declcfg.DeclarativeConfig) {
	dst.Packages = append(dst.Packages, src.Packages...)
	dst.Channels = append(dst.Channels, src.Channels...)
	dst.Bundles = append(dst.Bundles, src.Bundles...)
	dst.Others = append(dst.Others, src.Others...)
}

// url reads a stream of catalog objects over HTTP.
func (f *FBCCatalogs) url(ctx context.Context, u string) (*declcfg.DeclarativeConfig, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxCatalogBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > maxCatalogBytes {
		return nil, fmt.Errorf("GET %s: the catalog is larger than %d MiB", u, maxCatalogBytes>>20)
	}
	return declcfg.LoadReader(bytes.NewReader(body))
}

// configMap reads a catalog from a ConfigMap's data, which a tenant must
// not control: the catalog decides what the controller installs with its
// own rights.
func (f *FBCCatalogs) configMap(ctx context.Context, ref tenancyv1.ConfigMapReference, tenantNamespaces []string) (*declcfg.DeclarativeConfig, error) {
	ns := &corev1.Namespace{}
	if err := f.reader.Get(ctx, client.ObjectKey{Name: ref.Namespace}, ns); err != nil {
		return nil, fmt.Errorf("namespace %s: %w", ref.Namespace, err)
	}
	if slices.Contains(tenantNamespaces, ref.Namespace) || ns.Labels[tenancyv1.LabelTenant] != "" {
		return nil, ErrRefusedConfigMap{ref}
	}
	cm := &corev1.ConfigMap{}
	if err := f.reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, cm); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for k, v := range cm.Data {
		files[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		files[k] = v
	}
	return loadFiles(files)
}

// ErrRefusedConfigMap is a catalog ConfigMap in a tenant namespace.
type ErrRefusedConfigMap struct{ ref tenancyv1.ConfigMapReference }

func (e ErrRefusedConfigMap) Error() string {
	return fmt.Sprintf("ConfigMap %s/%s is in a tenant namespace, whose objects the tenant controls; keep catalog ConfigMaps in a namespace of the platform", e.ref.Namespace, e.ref.Name)
}
