package kit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Generate renders p into dir, writes kit.yaml, keeps every user-owned
// file that exists, and runs controller-tools. A project outside the
// opctl module gets a go.mod and go.sum (user-owned too) from GoMod.
func Generate(dir string, p *Project) (Report, error) {
	files, err := Render(p)
	if err != nil {
		return Report{}, err
	}
	if p.OpctlPath != "" {
		gomod, gosum, err := GoMod(p, dir)
		if err != nil {
			return Report{}, err
		}
		files = append(files, File{Path: "go.mod", Content: gomod, Owner: User}, File{Path: "go.sum", Content: gosum, Owner: User})
		slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	}
	rep, err := Write(dir, files)
	if err != nil {
		return rep, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "config", "crd", "bases"), 0o755); err != nil {
		return rep, err
	}
	if err := controllerGen(dir, p); err != nil {
		return rep, fmt.Errorf("generating deepcopy code, CRDs and RBAC: %w", err)
	}
	return rep, nil
}
