package validate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Kinds of input.
const (
	KindAuto    = "auto"
	KindBundle  = "bundle"
	KindChart   = "chart"
	KindProject = "project"
	KindCatalog = "catalog"
)

// Detect tells what path holds: a bundle (manifests/ and metadata/), a
// chart (Chart.yaml) or an operator project (config/default).
func Detect(path string) (string, error) {
	kind, err := sniff(path)
	if err == nil && kind == "" {
		err = fmt.Errorf("%s is neither an OLM bundle (manifests/, metadata/), a Helm chart (Chart.yaml), a file-based catalog (olm.package documents) nor an operator project (config/default): pass --kind", path)
	}
	return kind, err
}

// sniff is Detect's kind of path, "" when it is none of them.
func sniff(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", path, err)
	}
	if !fi.IsDir() {
		if strings.HasSuffix(path, ".tgz") || strings.HasSuffix(path, ".tar.gz") {
			return KindChart, nil
		}
		return "", fmt.Errorf("%s is a file: give a bundle, chart or project directory, or a chart .tgz", path)
	}
	exists := func(p string) bool { _, err := os.Stat(filepath.Join(path, p)); return err == nil }
	switch {
	case exists("Chart.yaml"):
		return KindChart, nil
	case exists("manifests") && exists("metadata"):
		return KindBundle, nil
	case exists(filepath.Join("config", "default")):
		return KindProject, nil
	case isCatalog(path):
		return KindCatalog, nil
	}
	return "", nil
}

// isCatalog reports a directory whose YAML or JSON files declare an
// olm.package.
func isCatalog(dir string) bool {
	found := false
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || found || d.IsDir() {
			return nil
		}
		if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" && ext != ".json" {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "olm.package") {
			found = true
		}
		return nil
	})
	return found
}
