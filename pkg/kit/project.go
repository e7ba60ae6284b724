package kit

import (
	"errors"
	"fmt"
	"opctl.dev/opctl/internal/lazyre"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/gobuffalo/flect"
	"sigs.k8s.io/yaml"
)

// StateFile is the project's state at its root, written by every command.
const StateFile = "kit.yaml"

// Project is what opctl kit knows of an operator project.
type Project struct {
	// Name of the operator, such as memcached-operator.
	Name string `json:"name"`
	// Repo is the Go module path of the project (or of its package when the
	// project lives inside another module).
	Repo string `json:"repo"`
	// Domain of the API groups.
	Domain string `json:"domain"`
	// OpctlPath is the opctl checkout the go.mod replaces opctl.dev/opctl
	// with, relative to the project or absolute; empty when the project
	// is a package of the opctl module itself.
	OpctlPath string `json:"opctlPath,omitempty"`
	// Kinds are the APIs, in the order they were created.
	Kinds []Kind `json:"kinds,omitempty"`
}

// Kind is one API kind and the resources its handler manages.
type Kind struct {
	Group     string     `json:"group"`
	Version   string     `json:"version"`
	Kind      string     `json:"kind"`
	Resources []Resource `json:"resources,omitempty"`
}

// Resource is one managed object of a kind.
type Resource struct {
	// Name of the resource, a DNS label: the object is named
	// <owner>-<name>.
	Name string `json:"name"`
	// Kind of the object: one of Kinds.
	Kind string `json:"kind"`
}

// ResourceKinds are the kinds create resource knows.
var ResourceKinds = []string{"ConfigMap", "Deployment", "PersistentVolumeClaim", "Secret", "Service", "StatefulSet"}

var (
	dnsLabel   = lazyre.New(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	kindName   = lazyre.New(`^[A-Z][A-Za-z0-9]*$`)
	versionRe  = lazyre.New(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)
	modulePath = lazyre.New(`^[a-z0-9][-a-z0-9._~]*(/[A-Za-z0-9][-A-Za-z0-9._~]*)*$`)
	domainRe   = lazyre.New(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`)
)

// Validate checks every name the templates use.
func (p *Project) Validate() error {
	errs := []error{
		match(dnsLabel, "name", p.Name, "a DNS label such as memcached-operator"),
		match(modulePath, "repo", p.Repo, "a Go module path such as example.com/memcached-operator"),
		match(domainRe, "domain", p.Domain, "a DNS domain such as example.com"),
	}
	for _, k := range p.Kinds {
		errs = append(errs, k.validate())
	}
	return errors.Join(errs...)
}

// match reports value unless re matches it.
func match(re func() *regexp.Regexp, what, value, want string) error {
	if re().MatchString(value) {
		return nil
	}
	return fmt.Errorf("%s %q: want %s", what, value, want)
}

func (k Kind) validate() error {
	errs := []error{
		match(dnsLabel, "group", k.Group, "a DNS label such as cache"),
		match(versionRe, "version", k.Version, "a Kubernetes API version such as v1alpha1"),
		match(kindName, "kind", k.Kind, "an upper camel case name such as Memcached"),
	}
	for _, r := range k.Resources {
		errs = append(errs, match(dnsLabel, "resource of "+k.Kind, r.Name, "a DNS label such as web"))
		if !slices.Contains(ResourceKinds, r.Kind) {
			errs = append(errs, fmt.Errorf("resource %s of %s: kind %q is not one of %s", r.Name, k.Kind, r.Kind, strings.Join(ResourceKinds, ", ")))
		}
	}
	return errors.Join(errs...)
}

// AddKind adds a kind; one that exists is an error.
func (p *Project) AddKind(k Kind) error {
	if err := k.validate(); err != nil {
		return err
	}
	for _, o := range p.Kinds {
		if o.Kind == k.Kind {
			return fmt.Errorf("kind %s exists (%s/%s)", k.Kind, o.Group, o.Version)
		}
	}
	p.Kinds = append(p.Kinds, k)
	return nil
}

// AddResource adds a resource to the kind named forKind.
func (p *Project) AddResource(forKind string, r Resource) error {
	for i := range p.Kinds {
		k := &p.Kinds[i]
		if k.Kind != forKind {
			continue
		}
		for _, o := range k.Resources {
			if o.Name == r.Name {
				return fmt.Errorf("%s has a resource named %s (%s)", forKind, r.Name, o.Kind)
			}
		}
		k.Resources = append(k.Resources, r)
		return k.validate()
	}
	return fmt.Errorf("no kind %s: create it with opctl kit create api", forKind)
}

// Load reads the state of the project in dir.
func Load(dir string) (*Project, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateFile))
	if err != nil {
		return nil, fmt.Errorf("reading the project state: %w (run opctl kit init first)", err)
	}
	p := &Project{}
	if err := yaml.UnmarshalStrict(b, p); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", StateFile, err)
	}
	return p, p.Validate()
}

// state is the bytes of kit.yaml.
func (p *Project) state() ([]byte, error) {
	b, err := yaml.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", StateFile, err)
	}
	return append([]byte("# The state of this operator project, written by opctl kit: change it\n# with opctl kit init, create api and create resource.\n"), b...), nil
}

// Names derived from a kind, for the templates.

// Lower is the kind in lower case.
func (k Kind) Lower() string { return strings.ToLower(k.Kind) }

// Plural is the resource name of the kind, as controller-gen names it.
func (k Kind) Plural() string { return flect.Pluralize(strings.ToLower(k.Kind)) }

// FullGroup is the API group: the group and the domain.
func (k Kind) FullGroup(domain string) string { return k.Group + "." + domain }

// Ident is the resource's name as a Go identifier part: web-server gives
// WebServer.
func (r Resource) Ident() string {
	var b strings.Builder
	for _, part := range strings.Split(r.Name, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
