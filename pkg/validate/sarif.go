package validate

import (
	"encoding/json"
	"io"
	"path"
	"path/filepath"
	"strings"
)

// SARIF 2.1.0 types, only the parts opctl writes.
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool    sarifTool     `json:"tool"`
		Results []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		InformationURI string      `json:"informationUri,omitempty"`
		Version        string      `json:"version,omitempty"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string       `json:"id"`
		ShortDescription     sarifText    `json:"shortDescription"`
		Help                 sarifText    `json:"help"`
		DefaultConfiguration sarifDefault `json:"defaultConfiguration"`
	}
	sarifDefault struct {
		Level string `json:"level"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID    string          `json:"ruleId"`
		RuleIndex int             `json:"ruleIndex"`
		Level     string          `json:"level"`
		Message   sarifText       `json:"message"`
		Locations []sarifLocation `json:"locations,omitempty"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical `json:"physicalLocation"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           *sarifRegion  `json:"region,omitempty"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine int `json:"startLine"`
	}
)

func sarifLevel(s Severity) string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	}
	return "note"
}

// WriteSARIF writes the reports as one SARIF 2.1.0 run with a rule per
// check, for GitHub code scanning. Locations are the validated paths as
// given, joined with each finding's file.
func WriteSARIF(w io.Writer, reports []*Report, toolVersion string) error {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "opctl", InformationURI: "https://opctl.dev", Version: toolVersion}}, Results: []sarifResult{}}
	index := map[string]int{}
	for i, c := range Checks {
		index[c.ID] = i
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{
			ID: c.ID, ShortDescription: sarifText{c.Rationale}, Help: sarifText{c.Hint},
			DefaultConfiguration: sarifDefault{sarifLevel(c.Severity)},
		})
	}
	for _, r := range reports {
		root := filepath.ToSlash(strings.TrimSuffix(r.Path, " (packaged)"))
		for _, f := range r.Findings {
			msg := f.Message
			if f.Object != "" {
				msg = f.Object + ": " + msg
			}
			if f.Source != "opctl" {
				msg += " [" + f.Source + "]"
			}
			res := sarifResult{RuleID: f.Check, RuleIndex: index[f.Check], Level: sarifLevel(f.Severity), Message: sarifText{msg}}
			uri := root
			if f.File != "" {
				uri = path.Join(root, f.File)
			}
			loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: uri}}}
			if f.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Line}
			}
			res.Locations = []sarifLocation{loc}
			run.Results = append(run.Results, res)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}
