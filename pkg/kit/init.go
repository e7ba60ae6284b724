package kit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"golang.org/x/mod/modfile"
)

// Init returns the project to scaffold in dir. When dir lies inside the
// opctl module and opctlPath is empty, the project is a package of that
// module (no go.mod; repo defaults to its import path); otherwise
// opctlPath must name an opctl checkout and repo is required.
func Init(dir, name, repo, domain, opctlPath string) (*Project, error) {
	if _, err := os.Stat(filepath.Join(dir, StateFile)); err == nil {
		return nil, fmt.Errorf("%s has a %s already: use opctl kit create or opctl kit generate", dir, StateFile)
	}
	p := &Project{Name: name, Repo: repo, Domain: domain, OpctlPath: opctlPath}
	if opctlPath == "" {
		mod, rel, err := enclosingModule(dir)
		if err != nil {
			return nil, err
		}
		if mod != OpctlModule {
			return nil, fmt.Errorf("%s is not inside the opctl module: set --opctl-path to an opctl checkout", dir)
		}
		if p.Repo == "" {
			p.Repo = path.Join(mod, filepath.ToSlash(rel))
		}
	}
	if p.Name == "" {
		p.Name = path.Base(p.Repo)
	}
	return p, p.Validate()
}

// enclosingModule finds the go.mod above dir and returns its module path
// and dir's path relative to it.
func enclosingModule(dir string) (module, rel string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			rel, err := filepath.Rel(d, abs)
			if err != nil {
				return "", "", err
			}
			return modfile.ModulePath(b), rel, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", fmt.Errorf("reading go.mod: %w", err)
		}
		if filepath.Dir(d) == d {
			return "", "", fmt.Errorf("%s is in no Go module: set --opctl-path to an opctl checkout", dir)
		}
	}
}
