package packaging

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/yaml"
)

// baseCSVDir holds operator-sdk's base CSV.
var baseCSVDir = filepath.Join("config", "manifests", "bases")

// generatedAnnotations are written by generators, never carried from a
// base CSV: opctl computes them (createdAt would break determinism).
var generatedAnnotations = []string{"alm-examples", "createdAt", "operators.operatorframework.io/builder", "operators.operatorframework.io/project_layout"}

// loadBaseCSV reads the base CSV: <name>.clusterserviceversion.yaml, else
// the only one. It returns nil when the project has none. A spec.version
// that is not SemVer (like master, which `make bundle VERSION=…`
// overwrites) is left out of the CSV and returned as badVersion, for the
// caller to judge against the versions given elsewhere.
func loadBaseCSV(dir, name string) (csv *operatorsv1alpha1.ClusterServiceVersion, path, badVersion string, err error) {
	files, _ := filepath.Glob(filepath.Join(dir, baseCSVDir, "*.clusterserviceversion.yaml"))
	slices.Sort(files)
	switch {
	case len(files) == 0:
		return nil, "", "", nil
	case len(files) == 1:
		path = files[0]
	default:
		path = filepath.Join(dir, baseCSVDir, name+".clusterserviceversion.yaml")
		if !slices.Contains(files, path) {
			return nil, "", "", fmt.Errorf("%s holds several base CSVs and none is %s.clusterserviceversion.yaml: keep one, or set name in %s", filepath.Join(dir, baseCSVDir), name, ConfigFile)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", "", err
	}
	if b, badVersion, err = withoutBadVersion(b); err != nil {
		return nil, "", "", fmt.Errorf("%s: %w", path, err)
	}
	csv = &operatorsv1alpha1.ClusterServiceVersion{}
	if err := yaml.Unmarshal(b, csv); err != nil {
		return nil, "", "", fmt.Errorf("%s: %w", path, err)
	}
	if csv.Kind != operatorsv1alpha1.ClusterServiceVersionKind {
		return nil, "", "", fmt.Errorf("%s: kind %q, want ClusterServiceVersion", path, csv.Kind)
	}
	return csv, path, badVersion, nil
}

// withoutBadVersion drops a spec.version that is not SemVer from a CSV's
// YAML, returning it; the CSV type's own decoding would fail on it.
func withoutBadVersion(b []byte) ([]byte, string, error) {
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, "", err
	}
	spec, _ := raw["spec"].(map[string]any)
	v, ok := spec["version"]
	if !ok {
		return b, "", nil
	}
	s, isString := v.(string)
	if isString && s == "" {
		return b, "", nil
	}
	if isString {
		if _, err := semver.Parse(s); err == nil {
			return b, "", nil
		}
	}
	delete(spec, "version")
	out, err := yaml.Marshal(raw)
	if err != nil {
		return nil, "", err
	}
	return out, fmt.Sprint(v), nil
}

// checkBaseVersion judges a base CSV's spec.version that is not SemVer:
// a warning when the version comes from elsewhere (--version, opctl.yaml,
// the Makefile's VERSION), else an error naming the field and value.
func checkBaseVersion(path, bad, flag, elsewhere string) (string, error) {
	if bad == "" {
		return "", nil
	}
	if v := firstNonEmpty(flag, elsewhere); v != "" {
		return fmt.Sprintf("%s: spec.version %q is not SemVer; the package's version is %s, from --version, %s or the Makefile's VERSION", path, bad, v, ConfigFile), nil
	}
	return "", fmt.Errorf("%s: spec.version %q is not SemVer (like 1.2.3): set it there, pass --version, or set version in %s", path, bad, ConfigFile)
}

// baseConfig is what a base CSV says, as opctl.yaml would say it.
func baseConfig(csv *operatorsv1alpha1.ClusterServiceVersion) Config {
	if csv == nil {
		return Config{}
	}
	s := csv.Spec
	c := Config{
		DisplayName: s.DisplayName, Description: s.Description, Keywords: s.Keywords,
		Provider: Link{Name: s.Provider.Name, URL: s.Provider.URL}, MinKubeVersion: s.MinKubeVersion,
		Maturity: s.Maturity, Replaces: s.Replaces, Skips: s.Skips,
	}
	if name, version, ok := strings.Cut(csv.Name, ".v"); ok && dnsLabel(name) {
		c.Name = name
		if version != "0.0.0" && s.Version.String() != "0.0.0" {
			c.Version = s.Version.String()
		}
	}
	for _, m := range s.Maintainers {
		c.Maintainers = append(c.Maintainers, Maintainer{Name: m.Name, Email: m.Email})
	}
	for _, l := range s.Links {
		c.Links = append(c.Links, Link{Name: l.Name, URL: l.URL})
	}
	for _, m := range s.InstallModes {
		v := m.Supported
		switch m.Type {
		case operatorsv1alpha1.InstallModeTypeAllNamespaces:
			c.InstallModes.AllNamespaces = &v
		case operatorsv1alpha1.InstallModeTypeMultiNamespace:
			c.InstallModes.MultiNamespace = &v
		case operatorsv1alpha1.InstallModeTypeOwnNamespace:
			c.InstallModes.OwnNamespace = &v
		case operatorsv1alpha1.InstallModeTypeSingleNamespace:
			c.InstallModes.SingleNamespace = &v
		}
	}
	for k, v := range csv.Annotations {
		if slices.Contains(generatedAnnotations, k) || v == "" {
			continue
		}
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[k] = v
	}
	c.Capabilities = c.Annotations["capabilities"]
	c.Summary = c.Annotations["description"]
	c.SkipRange = c.Annotations["olm.skipRange"]
	for _, cat := range strings.Split(c.Annotations["categories"], ",") {
		if cat = strings.TrimSpace(cat); cat != "" {
			c.Categories = append(c.Categories, cat)
		}
	}
	return c
}

// overlayDescription lays the non-empty parts of over onto d: display
// name, description, resources and each descriptor list as a whole.
func overlayDescription(d *operatorsv1alpha1.CRDDescription, over operatorsv1alpha1.CRDDescription) {
	d.DisplayName = firstNonEmpty(over.DisplayName, d.DisplayName)
	d.Description = firstNonEmpty(over.Description, d.Description)
	if len(over.Resources) > 0 {
		d.Resources = over.Resources
	}
	if len(over.SpecDescriptors) > 0 {
		d.SpecDescriptors = over.SpecDescriptors
	}
	if len(over.StatusDescriptors) > 0 {
		d.StatusDescriptors = over.StatusDescriptors
	}
	if len(over.ActionDescriptor) > 0 {
		d.ActionDescriptor = over.ActionDescriptor
	}
}
