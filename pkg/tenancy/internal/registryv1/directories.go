package registryv1

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"sigs.k8s.io/yaml"
)

// Bundles and catalogs in directories, as opctl package and opctl publish
// write them, for opctl tenancy check: read with the bounds and parsers of
// the images the controller pulls.

// bundleAnnotations are the keys of metadata/annotations.yaml read here.
const (
	packageAnnotation   = "operators.operatorframework.io.bundle.package.v1"
	mediatypeAnnotation = "operators.operatorframework.io.bundle.mediatype.v1"
)

// BundleDir is a registry+v1 bundle read from a directory.
type BundleDir struct {
	BundleContent
	// Package is the package metadata/annotations.yaml names.
	Package string
	// Files name the file, relative to the directory, each object came
	// from, by "Kind/name".
	Files map[string]string
}

// ReadBundleDir reads the bundle in dir: metadata/annotations.yaml, which
// names its package, and the objects of manifests/, as the controller
// reads a bundle image's.
func ReadBundleDir(dir string) (*BundleDir, error) {
	meta := filepath.Join(dir, "metadata", "annotations.yaml")
	b, err := os.ReadFile(meta)
	if err != nil {
		return nil, fmt.Errorf("%s is not a registry+v1 bundle: %w", dir, err)
	}
	var ann struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(b, &ann); err != nil {
		return nil, fmt.Errorf("%s: %w", meta, err)
	}
	if mt := ann.Annotations[mediatypeAnnotation]; mt != "" && mt != "registry+v1" {
		return nil, fmt.Errorf("%s: %s is %q: only registry+v1 bundles are read", meta, mediatypeAnnotation, mt)
	}
	out := &BundleDir{Package: ann.Annotations[packageAnnotation], Files: map[string]string{}}
	if out.Package == "" {
		return nil, fmt.Errorf("%s: annotations.%s is not set: a bundle names its package there", meta, packageAnnotation)
	}
	files, err := readTree(dir, "manifests", maxBundleBytes)
	if err != nil {
		return nil, err
	}
	docs, paths := manifestDocs(files)
	if len(docs) == 0 {
		return nil, fmt.Errorf("%s has no YAML or JSON files under manifests/", dir)
	}
	if err := countDocs(out.Package, docs); err != nil {
		return nil, err
	}
	for i, doc := range docs {
		objs, err := ReadDocs(out.Package, []string{doc})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, paths[i]), err)
		}
		for _, o := range objs {
			out.Files[o.GetKind()+"/"+o.GetName()] = paths[i]
		}
		out.Objects = append(out.Objects, objs...)
	}
	return out, nil
}

// LoadCatalogDir reads the file-based catalog in dir (its YAML and JSON
// files, in path order), as the controller reads a catalog image's.
func LoadCatalogDir(dir string) (*declcfg.DeclarativeConfig, error) {
	files, err := readTree(dir, ".", maxCatalogBytes)
	if err != nil {
		return nil, err
	}
	if len(catalogFiles(files)) == 0 {
		return nil, fmt.Errorf("%s has no YAML or JSON files of a file-based catalog", dir)
	}
	cfg, err := loadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", dir, err)
	}
	return cfg, nil
}

// readTree returns the regular files under sub of dir, by slash path
// relative to dir, refusing more than limit bytes of them.
func readTree(dir, sub string, limit int) (map[string][]byte, error) {
	files, total := map[string][]byte{}, 0
	root := os.DirFS(dir)
	err := fs.WalkDir(root, sub, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if total += int(fi.Size()); total > limit {
			return fmt.Errorf("the files under %s are larger than %d MiB", filepath.Join(dir, sub), limit>>20)
		}
		b, err := fs.ReadFile(root, p)
		files[p] = b
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	return files, nil
}
