package imagebuild

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"net/url"
	"opctl.dev/opctl/internal/lazyre"
	"strings"
	"time"
)

// SBOMMediaType is the media type of the SPDX document Build writes.
const SBOMMediaType = "application/spdx+json"

// spdxDoc is the part of SPDX 2.3 (JSON) an SBOM of Go modules uses.
type spdxDoc struct {
	SPDXVersion       string         `json:"spdxVersion"`
	DataLicense       string         `json:"dataLicense"`
	SPDXID            string         `json:"SPDXID"`
	Name              string         `json:"name"`
	DocumentNamespace string         `json:"documentNamespace"`
	CreationInfo      spdxCreation   `json:"creationInfo"`
	DocumentDescribes []string       `json:"documentDescribes"`
	Packages          []spdxPackage  `json:"packages"`
	Relationships     []spdxRelation `json:"relationships"`
}

type spdxCreation struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	Name             string       `json:"name"`
	SPDXID           string       `json:"SPDXID"`
	VersionInfo      string       `json:"versionInfo,omitempty"`
	DownloadLocation string       `json:"downloadLocation"`
	FilesAnalyzed    bool         `json:"filesAnalyzed"`
	Checksums        []spdxSum    `json:"checksums,omitempty"`
	ExternalRefs     []spdxExtRef `json:"externalRefs,omitempty"`
	PrimaryPurpose   string       `json:"primaryPackagePurpose,omitempty"`
	Comment          string       `json:"comment,omitempty"`
}

type spdxSum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

type spdxExtRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

type spdxRelation struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

var spdxIDUnsafe = lazyre.New(`[^A-Za-z0-9.-]+`)

func spdxID(kind, path, version string) string {
	return "SPDXRef-" + kind + "-" + strings.Trim(spdxIDUnsafe().ReplaceAllString(path+"-"+version, "-"), "-")
}

// purl is the package URL of a Go module.
func purl(path, version string) string {
	p := "pkg:golang/" + path
	if version != "" && version != "(devel)" {
		p += "@" + url.PathEscape(version)
	}
	return p
}

// sbom writes the SPDX document of a binary's modules: the main module
// (the program), each module it links and the Go toolchain. name and
// binaryDigest make the document's namespace, so it is unique to the
// build and the same for the same build.
func sbom(name string, info *buildinfo.BuildInfo, binaryDigest string, created time.Time) ([]byte, error) {
	mainID := spdxID("Package", info.Main.Path, info.Main.Version)
	doc := spdxDoc{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name:              name,
		DocumentNamespace: "https://opctl.dev/spdx/" + url.PathEscape(name) + "/" + strings.TrimPrefix(binaryDigest, "sha256:"),
		CreationInfo:      spdxCreation{Created: created.UTC().Format(time.RFC3339), Creators: []string{"Tool: opctl"}},
		DocumentDescribes: []string{mainID},
	}
	doc.Packages = append(doc.Packages, spdxPackage{
		Name: info.Main.Path, SPDXID: mainID, VersionInfo: info.Main.Version, DownloadLocation: "NOASSERTION",
		Checksums:      []spdxSum{{Algorithm: "SHA256", Value: strings.TrimPrefix(binaryDigest, "sha256:")}},
		ExternalRefs:   []spdxExtRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: purl(info.Main.Path, info.Main.Version)}},
		PrimaryPurpose: "APPLICATION", Comment: "main package " + info.Path,
	})
	goID := spdxID("Toolchain", "go", info.GoVersion)
	doc.Packages = append(doc.Packages, spdxPackage{
		Name: "go", SPDXID: goID, VersionInfo: strings.TrimPrefix(info.GoVersion, "go"), DownloadLocation: "https://go.dev/dl/",
		ExternalRefs: []spdxExtRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:golang/stdlib@" + strings.TrimPrefix(info.GoVersion, "go")}},
	})
	doc.Relationships = append(doc.Relationships,
		spdxRelation{Element: "SPDXRef-DOCUMENT", Type: "DESCRIBES", Related: mainID},
		spdxRelation{Element: mainID, Type: "BUILD_DEPENDENCY_OF", Related: goID})
	seen := map[string]bool{mainID: true, goID: true}
	for _, d := range info.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		id := spdxID("Package", d.Path, m.Version)
		if seen[id] {
			continue
		}
		seen[id] = true
		// A module replaced keeps its own name; the replacement is said.
		loc := purl(m.Path, m.Version)
		if m.Version == "" { // a local directory
			loc = purl(d.Path, "")
		}
		pkg := spdxPackage{Name: d.Path, SPDXID: id, VersionInfo: m.Version, DownloadLocation: "NOASSERTION",
			ExternalRefs: []spdxExtRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: loc}}}
		if d.Replace != nil {
			pkg.Comment = "replaced by " + strings.TrimSuffix(m.Path+"@"+m.Version, "@")
		}
		if m.Sum != "" {
			pkg.Comment = strings.TrimSpace(pkg.Comment + " go.sum " + m.Sum)
		}
		doc.Packages = append(doc.Packages, pkg)
		doc.Relationships = append(doc.Relationships, spdxRelation{Element: mainID, Type: "DEPENDS_ON", Related: id})
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("writing the SBOM: %w", err)
	}
	return append(b, '\n'), nil
}
