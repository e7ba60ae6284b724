package packaging

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/blang/semver/v4"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// ConfigFile is the overrides file in the project directory. opctl reads it
// and never writes it.
const ConfigFile = "opctl.yaml"

// Config is the content of opctl.yaml.
type Config struct {
	// Name of the package, chart and bundle.
	Name string `json:"name,omitempty"`
	// Version of the operator (SemVer), used when --version is not given.
	Version string `json:"version,omitempty"`
	// DisplayName is the human name of the operator.
	DisplayName string `json:"displayName,omitempty"`
	// Description is a few paragraphs of Markdown.
	Description string `json:"description,omitempty"`
	// Summary is one line.
	Summary string `json:"summary,omitempty"`
	// Icon is a file in the project (SVG or PNG).
	Icon string `json:"icon,omitempty"`
	// Maintainers of the operator.
	Maintainers []Maintainer `json:"maintainers,omitempty"`
	// Provider of the operator.
	Provider Link `json:"provider,omitempty"`
	// Links to documentation and source.
	Links []Link `json:"links,omitempty"`
	// Keywords for search.
	Keywords []string `json:"keywords,omitempty"`
	// Categories from the OperatorHub list.
	Categories []string `json:"categories,omitempty"`
	// Capabilities is the Operator Capability Level, "Basic Install" to
	// "Auto Pilot".
	Capabilities string `json:"capabilities,omitempty"`
	// Maturity of the operator (alpha, beta, stable); default from the
	// version.
	Maturity string `json:"maturity,omitempty"`
	// Annotations are added to the CSV; the fields above win over them.
	Annotations map[string]string `json:"annotations,omitempty"`
	// Channels of the bundle and its DefaultChannel, when --channels and
	// --default-channel are not given.
	Channels       []string `json:"channels,omitempty"`
	DefaultChannel string   `json:"defaultChannel,omitempty"`
	// MinKubeVersion the operator needs.
	MinKubeVersion string `json:"minKubeVersion,omitempty"`
	// Replaces, Skips and SkipRange describe the upgrade graph.
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
	// InstallModes override what the RBAC analysis allows.
	InstallModes InstallModes `json:"installModes,omitempty"`
	// RBACScope is the chart's default rbac.scope (namespace or cluster),
	// as --rbac-scope sets it; the flag wins.
	RBACScope string `json:"rbacScope,omitempty"`
	// Manager names the manager Deployment when the overlay has several.
	Manager string `json:"manager,omitempty"`
	// Main is the manager's main package (a directory or a .go file of the
	// project), where opctl package reads which namespaces the manager
	// watches; default the Dockerfile's go build, cmd/main.go or main.go.
	Main string `json:"main,omitempty"`
	// ExtraValues are merged into the chart's values.yaml.
	ExtraValues map[string]any `json:"extraValues,omitempty"`
	// ExtraValueDocs describe extraValues, by key, in values.yaml and the
	// chart's README.
	ExtraValueDocs map[string]string `json:"extraValueDocs,omitempty"`
	// ExtraTemplates are files of the project (Helm templates of the
	// chart's own, reading extraValues) copied into the chart's templates/
	// as they are; the bundle, which OLM does not template, leaves them out.
	ExtraTemplates []string `json:"extraTemplates,omitempty"`
	// Operands describe, per CRD, what one custom resource runs: the
	// platform-as-code figures.
	Operands map[string]Operand `json:"operands,omitempty"`
	// Webhooks configure how the webhooks are served.
	Webhooks WebhookConfig `json:"webhooks,omitempty"`
}

// WebhookConfig overrides what opctl detects about the webhooks.
type WebhookConfig struct {
	// Certificates: helm (a CA Helm generates), cert-manager, or operator
	// (the operator issues its own and patches caBundle). Detected when
	// empty: operator when the manager mounts no serving certificate.
	Certificates string `json:"certificates,omitempty"`
}

// Maintainer of the operator.
type Maintainer struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
}

// Link is a named URL.
type Link struct {
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
}

// InstallModes overrides the OLM install modes.
type InstallModes struct {
	AllNamespaces   *bool `json:"allNamespaces,omitempty"`
	MultiNamespace  *bool `json:"multiNamespace,omitempty"`
	OwnNamespace    *bool `json:"ownNamespace,omitempty"`
	SingleNamespace *bool `json:"singleNamespace,omitempty"`
}

// Operand describes what one custom resource of a CRD runs.
type Operand struct {
	// Composition lists the kinds one custom resource creates, for
	// example "StatefulSet, Service, ConfigMap, Secret, PodDisruptionBudget".
	Composition []string `json:"composition,omitempty"`
	// Usage is a short description of how to use the custom resource.
	Usage string `json:"usage,omitempty"`
	// Replicas of the operand per custom resource, by default.
	Replicas int `json:"replicas,omitempty"`
	// Resources of one operand replica: cpu/memory requests and limits,
	// and requests.storage, the size of one of its volumes.
	Resources OperandResources `json:"resources,omitempty"`
	// PVCsPerReplica is how many volumes of requests.storage each replica
	// claims (default 1 when storage is set).
	PVCsPerReplica int `json:"pvcsPerReplica,omitempty"`
	// PDB of the operand: minAvailable or maxUnavailable.
	PDB map[string]string `json:"pdb,omitempty"`
	// SecurityContext the operand pods run with.
	SecurityContext map[string]any `json:"securityContext,omitempty"`
	// ServiceAccount the operand pods run as.
	ServiceAccount string `json:"serviceAccount,omitempty"`
}

// OperandResources are quantities as strings ("100m", "128Mi").
type OperandResources struct {
	Requests map[string]string `json:"requests,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
}

// LoadConfig reads opctl.yaml in dir; a missing file gives the zero Config.
// Unknown fields are errors that name the file and the field.
func LoadConfig(dir string) (Config, error) {
	path := filepath.Join(dir, ConfigFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("reading %s: %w", path, err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		return Config{}, fmt.Errorf("%s: not valid YAML: %w", path, err)
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("%s: %w (see the opctl.yaml reference in the README)", path, err)
	}
	if err := c.check(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// check refuses values that would package into a chart or bundle the
// tools reject, naming the field.
func (c Config) check() error {
	if err := unprintable(reflect.ValueOf(c), ""); err != nil {
		return err
	}
	if m := c.Webhooks.Certificates; m != "" && !slices.Contains(certModes, m) {
		return fmt.Errorf("webhooks.certificates %q: use %s", m, strings.Join(certModes, ", "))
	}
	if v := c.MinKubeVersion; v != "" {
		if _, err := semver.Parse(v); err != nil {
			return fmt.Errorf("minKubeVersion %q is not SemVer (like 1.30.0): %w", v, err)
		}
	}
	return nil
}
