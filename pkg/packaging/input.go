package packaging

import (
	"fmt"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
)

// inputs are what a project says about itself outside its overlay.
type inputs struct {
	// config is opctl.yaml layered over the base CSV and the Makefile.
	config      Config
	projectFile *ProjectFile
	make        MakeDefaults
	// baseCSV is the path of the base CSV, "" without one; baseIcons its
	// icons and baseOwned its owned-CRD descriptions by name/version.
	baseCSV   string
	baseIcons []operatorsv1alpha1.Icon
	baseOwned map[string]operatorsv1alpha1.CRDDescription
	// markers are the CSV markers of the API types by group/version/kind.
	markers map[string]operatorsv1alpha1.CRDDescription
	// warnings say what of these inputs opctl left out or assumed.
	warnings []string
	// secureFlag says the manager's Go sources define --metrics-secure.
	secureFlag bool
	// ownModes are opctl.yaml's installModes alone, without the base
	// CSV's: only they override what the manager's code shows.
	ownModes InstallModes
}

func loadInputs(dir string, opts Options) (*inputs, error) {
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	in := &inputs{baseOwned: map[string]operatorsv1alpha1.CRDDescription{}, ownModes: cfg.InstallModes}
	if in.projectFile, err = loadProjectFile(dir); err != nil {
		return nil, err
	}
	if in.make, err = loadMakeDefaults(dir); err != nil {
		return nil, err
	}
	name := firstNonEmpty(opts.Name, cfg.Name)
	if name == "" && in.projectFile != nil {
		name = in.projectFile.ProjectName
	}
	base, path, badVersion, err := loadBaseCSV(dir, name)
	if err != nil {
		return nil, err
	}
	warning, err := checkBaseVersion(path, badVersion, opts.Version, firstNonEmpty(cfg.Version, in.make.Version))
	if err != nil {
		return nil, err
	}
	if warning != "" {
		in.warnings = append(in.warnings, warning)
	}
	bc := baseConfig(base)
	in.warnings = append(in.warnings, dropBaseTemplates(path, &bc)...)
	if err := bc.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if base != nil {
		in.baseCSV = path
		for _, icon := range base.Spec.Icon {
			if icon.Data != "" && icon.MediaType != "" { // the scaffold's icon is an empty placeholder
				in.baseIcons = append(in.baseIcons, icon)
			}
		}
		for _, d := range base.Spec.CustomResourceDefinitions.Owned {
			in.baseOwned[d.Name+"/"+d.Version] = d
		}
	}
	mk := Config{Version: in.make.Version, Channels: in.make.Channels, DefaultChannel: in.make.DefaultChannel}
	in.config = layerConfig(cfg, bc, mk)
	var warnings []string
	if in.markers, warnings, err = loadMarkers(dir, in.projectFile); err != nil {
		return nil, err
	}
	in.warnings = append(in.warnings, warnings...)
	in.secureFlag = definesFlag(dir, strings.TrimPrefix(metricsSecureFlag, "--"))
	return in, nil
}

// warningList is the inputs' warnings, none without inputs.
func (in *inputs) warningList() []string {
	if in == nil {
		return nil
	}
	return in.warnings
}

// description is the owned-CRD description of one CRD version: derived
// from the schema, then the base CSV's, then the markers'.
func (in *inputs) description(d operatorsv1alpha1.CRDDescription, group string) operatorsv1alpha1.CRDDescription {
	if in == nil {
		return d
	}
	if b, ok := in.baseOwned[d.Name+"/"+d.Version]; ok {
		overlayDescription(&d, b)
	}
	if m, ok := in.markers[group+"/"+d.Version+"/"+d.Kind]; ok {
		overlayDescription(&d, m)
	}
	return d
}

// layout is the PROJECT file's plugin chain, or "".
func (in *inputs) layout() string {
	if in == nil || in.projectFile == nil || len(in.projectFile.Layout) == 0 {
		return ""
	}
	return in.projectFile.Layout[0]
}

// icons are the base CSV's icons, or none.
func (in *inputs) icons() []operatorsv1alpha1.Icon {
	if in == nil {
		return nil
	}
	return in.baseIcons
}

// configModes are opctl.yaml's own installModes, none without inputs.
func (in *inputs) configModes() InstallModes {
	if in == nil {
		return InstallModes{}
	}
	return in.ownModes
}
