package packaging

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kubebuilder/v4/pkg/config"
	_ "sigs.k8s.io/kubebuilder/v4/pkg/config/v3" // registers version 3
	"sigs.k8s.io/yaml"
)

// ProjectFile is what opctl reads of kubebuilder's PROJECT file, through
// kubebuilder's own config types for the versions kubebuilder reads.
type ProjectFile struct {
	ProjectName string `json:"projectName"`
	Domain      string `json:"domain"`
	// Layout is the plugin chain, like go.kubebuilder.io/v4.
	Layout     []string      `json:"layout"`
	Repo       string        `json:"repo"`
	MultiGroup bool          `json:"multigroup"`
	Resources  []APIResource `json:"resources"`
}

// APIResource is one API the project scaffolded.
type APIResource struct {
	Group   string `json:"group"`
	Domain  string `json:"domain"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// Path is the Go package of the types; empty for external APIs.
	Path string `json:"path"`
}

// loadProjectFile reads dir/PROJECT; a missing file gives nil. Layout is a
// string in version 2 files and a list since version 3.
func loadProjectFile(dir string) (*ProjectFile, error) {
	path := filepath.Join(dir, "PROJECT")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var versioned struct {
		Version config.Version `json:"version"`
	}
	if err := yaml.Unmarshal(b, &versioned); err != nil {
		return nil, fmt.Errorf("%s: not valid YAML: %w", path, err)
	}
	if config.IsRegistered(versioned.Version) {
		return kubebuilderProject(path, versioned.Version, b)
	}
	// Version 2 files, which kubebuilder v4 no longer reads: layout is a
	// string there.
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: not valid YAML: %w", path, err)
	}
	if l, ok := raw["layout"].(string); ok {
		raw["layout"] = []any{l}
	}
	j, err := yaml.Marshal(raw)
	if err != nil {
		return nil, err
	}
	pf := &ProjectFile{}
	if err := yaml.Unmarshal(j, pf); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pf, nil
}

// kubebuilderProject reads a PROJECT file of a version kubebuilder reads
// (3) with kubebuilder's own config types.
func kubebuilderProject(path string, version config.Version, b []byte) (*ProjectFile, error) {
	cfg, err := config.New(version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := cfg.UnmarshalYAML(b); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	resources, err := cfg.GetResources()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	pf := &ProjectFile{ProjectName: cfg.GetProjectName(), Domain: cfg.GetDomain(), Layout: cfg.GetPluginChain(),
		Repo: cfg.GetRepository(), MultiGroup: cfg.IsMultiGroup()}
	for _, r := range resources {
		pf.Resources = append(pf.Resources, APIResource{Group: r.Group, Domain: r.Domain, Version: r.Version, Kind: r.Kind, Path: r.Path})
	}
	return pf, nil
}

// group is the API group of a resource: group.domain, or the domain alone
// for the core-style group "".
func (r APIResource) group(domain string) string {
	d := firstNonEmpty(r.Domain, domain)
	switch {
	case r.Group == "":
		return d
	case d == "":
		return r.Group
	}
	return r.Group + "." + d
}

// apiDir is the directory of the resource's Go types inside the project,
// or "" when the path is not under the project's repo.
func (pf *ProjectFile) apiDir(r APIResource) string {
	if pf.Repo == "" || !strings.HasPrefix(r.Path, pf.Repo+"/") {
		return ""
	}
	return filepath.FromSlash(strings.TrimPrefix(r.Path, pf.Repo+"/"))
}
