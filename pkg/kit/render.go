package kit

import (
	"bytes"
	"embed"
	"fmt"
	"go/format"
	"path"
	"slices"
	"strings"
	"sync"
	"text/template"

	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

// templates are parsed on first use, not at start-up: every opctl command
// links this package, few render.
var templates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("kit").ParseFS(templateFS, "templates/*.tmpl"))
})

// Owner says who owns a file.
type Owner int

const (
	// Generated files are rewritten whole by every run.
	Generated Owner = iota
	// User files are written when they do not exist, and never again.
	User
)

// File is one rendered file of a project.
type File struct {
	// Path is slash-separated, relative to the project.
	Path    string
	Content []byte
	Owner   Owner
}

// projectData is the data of the project-wide templates.
type projectData struct {
	P        *Project
	Versions []string
}

// kindData is the data of a kind's templates.
type kindData struct {
	P       *Project
	K       Kind
	Imports []string
	RBAC    []kindInfo
	Owns    []string
}

// versionData is the data of a version's templates.
type versionData struct {
	Group, Version string
	Kinds          []Kind
	// Wishable, WishRule and WishMessage are the standard lifecycle
	// graph's, for the markers of the wished phase.
	Wishable, WishRule, WishMessage string
}

// Render renders every file of p except go.mod and go.sum (see GoMod),
// sorted by path.
func Render(p *Project) ([]File, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var r renderer
	pd := projectData{P: p, Versions: p.versions()}
	r.add("PROJECT", "PROJECT.tmpl", pd, Generated)
	r.add("Makefile", "Makefile.tmpl", pd, User)
	r.add("opctl.yaml", "opctl.yaml.tmpl", pd, User)
	r.add("cmd/main.go", "main.go.tmpl", pd, User)
	r.add("internal/controller/doc.go", "controllerdoc.go.tmpl", pd, Generated)
	r.add("internal/controller/zz_generated.setup.go", "setup.go.tmpl", pd, Generated)
	r.add("internal/controller/suite_test.go", "suite_test.go.tmpl", pd, User)
	r.add("config/default/kustomization.yaml", "default_kustomization.yaml.tmpl", pd, User)
	r.add("config/manager/kustomization.yaml", "manager_kustomization.yaml.tmpl", pd, User)
	r.add("config/manager/manager.yaml", "manager.yaml.tmpl", pd, User)
	r.add("config/rbac/kustomization.yaml", "rbac_kustomization.yaml.tmpl", pd, User)
	r.add("config/rbac/service_account.yaml", "service_account.yaml.tmpl", pd, User)
	r.add("config/rbac/role_binding.yaml", "role_binding.yaml.tmpl", pd, User)
	r.add("config/rbac/leader_election_role.yaml", "leader_election_role.yaml.tmpl", pd, User)
	r.add("config/rbac/leader_election_role_binding.yaml", "leader_election_role_binding.yaml.tmpl", pd, User)
	r.add("config/crd/kustomization.yaml", "crd_kustomization.yaml.tmpl", pd, Generated)
	r.add("config/samples/kustomization.yaml", "samples_kustomization.yaml.tmpl", pd, Generated)
	for _, v := range pd.Versions {
		vd := newVersionData(v)
		for _, k := range p.Kinds {
			if k.Version == v {
				vd.Group = k.FullGroup(p.Domain)
				vd.Kinds = append(vd.Kinds, k)
			}
		}
		r.add("api/"+v+"/groupversion_info.go", "groupversion.go.tmpl", vd, Generated)
		r.add("api/"+v+"/zz_generated.kit.go", "kit.go.tmpl", vd, Generated)
	}
	for _, k := range p.Kinds {
		kd := newKindData(p, k)
		r.add("api/"+k.Version+"/"+k.Lower()+"_types.go", "types.go.tmpl", kd, User)
		r.add("internal/controller/"+k.Lower()+"_handler.go", "handler.go.tmpl", kd, User)
		r.add("internal/controller/"+k.Lower()+"_test.go", "kind_test.go.tmpl", kd, User)
		r.add("internal/controller/zz_generated."+k.Lower()+".go", "kind.go.tmpl", kd, Generated)
		r.add("config/samples/"+k.Group+"_"+k.Version+"_"+k.Lower()+".yaml", "sample.yaml.tmpl", kd, User)
		for _, res := range k.Resources {
			rd, err := newResourceData(p, k, res)
			if err != nil {
				return nil, err
			}
			r.add(resourcePath(k, res), "resource.go.tmpl", rd, User)
		}
	}
	state, err := p.state()
	if err != nil {
		return nil, err
	}
	r.files = append(r.files, File{Path: StateFile, Content: state, Owner: Generated})
	if r.err != nil {
		return nil, r.err
	}
	slices.SortFunc(r.files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return r.files, nil
}

func newVersionData(version string) versionData {
	m := lifecycle.Standard()
	wishable := make([]string, len(lifecycle.Wishable))
	for i, p := range lifecycle.Wishable {
		wishable[i] = string(p)
	}
	return versionData{Version: version, Wishable: strings.Join(wishable, ";"),
		WishRule: m.WishRule(lifecycle.Wishable), WishMessage: m.WishMessage(lifecycle.Wishable)}
}

// resourcePath is the user-owned file of a resource.
func resourcePath(k Kind, r Resource) string {
	return "internal/controller/" + k.Lower() + "_" + strings.ReplaceAll(r.Name, "-", "_") + "_resource.go"
}

// versions are the API versions of p, sorted.
func (p *Project) versions() []string {
	var vs []string
	for _, k := range p.Kinds {
		if !slices.Contains(vs, k.Version) {
			vs = append(vs, k.Version)
		}
	}
	slices.Sort(vs)
	return vs
}

func newKindData(p *Project, k Kind) kindData {
	kd := kindData{P: p, K: k}
	imports := []string{`ctrl "sigs.k8s.io/controller-runtime"`, `"opctl.dev/opctl/pkg/operatorkit"`,
		fmt.Sprintf("%s %q", k.Version, p.Repo+"/api/"+k.Version)}
	for _, res := range k.Resources {
		info := kinds[res.Kind]
		if !slices.Contains(kd.Owns, info.Type) {
			kd.Owns = append(kd.Owns, info.Type)
			kd.RBAC = append(kd.RBAC, info)
		}
		imp := importCore
		if strings.HasPrefix(info.Type, "appsv1.") {
			imp = importApps
		}
		if !slices.Contains(imports, imp) {
			imports = append(imports, imp)
		}
	}
	slices.Sort(imports)
	kd.Imports = imports
	return kd
}

// renderer collects files and the first error.
type renderer struct {
	files []File
	err   error
}

func (r *renderer) add(p, tmpl string, data any, owner Owner) {
	if r.err != nil {
		return
	}
	var b bytes.Buffer
	if err := templates().ExecuteTemplate(&b, tmpl, data); err != nil {
		r.err = fmt.Errorf("rendering %s: %w", p, err)
		return
	}
	content := b.Bytes()
	if path.Ext(p) == ".go" {
		formatted, err := format.Source(content)
		if err != nil {
			r.err = fmt.Errorf("formatting %s: %w\n%s", p, err, content)
			return
		}
		content = formatted
	}
	r.files = append(r.files, File{Path: p, Content: content, Owner: owner})
}
