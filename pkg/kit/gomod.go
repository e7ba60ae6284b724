package kit

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/modfile"
)

// OpctlModule is opctl's module path, which the module proxy does not
// serve: a scaffold's go.mod replaces it with a checkout.
const OpctlModule = "opctl.dev/opctl"

// opctlPseudo is the version a scaffold requires of opctl; the replace
// decides what it is.
const opctlPseudo = "v0.0.0-00010101000000-000000000000"

// GoMod returns the go.mod and go.sum of a project outside the opctl
// module: opctl replaced with the checkout at p.OpctlPath (relative to
// dir, the project), and every requirement at the version opctl's own
// go.mod names, with opctl's go.sum, so the project builds offline from
// the module cache that built opctl.
func GoMod(p *Project, dir string) (gomod, gosum []byte, err error) {
	root := p.OpctlPath
	if !filepath.IsAbs(root) {
		root = filepath.Join(dir, root)
	}
	src, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, nil, fmt.Errorf("reading opctl's go.mod (--opctl-path): %w", err)
	}
	opctl, err := modfile.Parse("go.mod", src, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing opctl's go.mod: %w", err)
	}
	if opctl.Module == nil || opctl.Module.Mod.Path != OpctlModule {
		return nil, nil, fmt.Errorf("%s is not an opctl checkout (its module is not %s)", root, OpctlModule)
	}
	f := &modfile.File{}
	steps := []error{f.AddModuleStmt(p.Repo)}
	if opctl.Go != nil {
		steps = append(steps, f.AddGoStmt(opctl.Go.Version))
	}
	if opctl.Toolchain != nil {
		steps = append(steps, f.AddToolchainStmt(opctl.Toolchain.Name))
	}
	f.AddNewRequire(OpctlModule, opctlPseudo, false)
	for _, r := range opctl.Require {
		f.AddNewRequire(r.Mod.Path, r.Mod.Version, r.Indirect)
	}
	steps = append(steps, f.AddReplace(OpctlModule, "", filepath.ToSlash(p.OpctlPath), ""))
	for _, r := range opctl.Replace {
		steps = append(steps, f.AddReplace(r.Old.Path, r.Old.Version, r.New.Path, r.New.Version))
	}
	for _, err := range steps {
		if err != nil {
			return nil, nil, fmt.Errorf("writing go.mod: %w", err)
		}
	}
	f.SetRequireSeparateIndirect(f.Require)
	f.Cleanup()
	if gomod, err = f.Format(); err != nil {
		return nil, nil, fmt.Errorf("formatting go.mod: %w", err)
	}
	if gosum, err = os.ReadFile(filepath.Join(root, "go.sum")); err != nil {
		return nil, nil, fmt.Errorf("reading opctl's go.sum: %w", err)
	}
	return gomod, gosum, nil
}
