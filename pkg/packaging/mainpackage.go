package packaging

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// mainCandidates are the conventional places of a manager's main package,
// tried in order after opctl.yaml and the Dockerfile: kubebuilder go/v4,
// go/v2 and v3, and operator-sdk's first layouts.
var mainCandidates = []string{"cmd/main.go", "main.go", "cmd/manager/main.go"}

// mainPackage finds the manager's main package, as a directory relative
// to the project: main in opctl.yaml (an override wins over detection),
// the package the Dockerfile builds into the program the manager runs,
// then mainCandidates. how says which; both are "" when none exists.
func (p *Project) mainPackage(df *dockerfile, mod *goModule) (dir, how string) {
	if m := p.Config.Main; m != "" {
		if d, ok := goDir(p.Dir, m); ok {
			return d, "main in " + ConfigFile
		}
	}
	program := ""
	if c := managerContainer(p.Manager); len(c.Command) > 0 {
		program = path.Base(c.Command[0])
	} else if len(c.Args) > 0 && !strings.HasPrefix(c.Args[0], "-") {
		program = path.Base(c.Args[0])
	}
	if b, ok := df.buildFor(program); ok {
		pkg := b.Pkg
		if mod != nil && (pkg == mod.Path || strings.HasPrefix(pkg, mod.Path+"/")) {
			// An import path: relative to the module root.
			if rel, err := filepath.Rel(p.Dir, filepath.Join(mod.Root, filepath.FromSlash(strings.TrimPrefix(pkg, mod.Path)))); err == nil {
				pkg = filepath.ToSlash(rel)
			}
		}
		if d, ok := goDir(p.Dir, pkg); ok {
			return d, "the Dockerfile's go build"
		}
	}
	for _, c := range mainCandidates {
		if d, ok := goDir(p.Dir, c); ok {
			return d, c
		}
	}
	return "", ""
}

// goDir is the directory of pkg (a .go file or a directory, relative to
// dir, "" or "." for dir itself) when it holds Go files.
func goDir(dir, pkg string) (string, bool) {
	pkg = filepath.Clean(filepath.FromSlash(strings.TrimPrefix(pkg, "./")))
	if filepath.IsAbs(pkg) {
		return "", false
	}
	full := filepath.Join(dir, pkg)
	// go build cmd/controller/*.go, as a Dockerfile's shell expands it:
	// the directory of the files.
	if strings.ContainsAny(pkg, "*?[") && strings.HasSuffix(pkg, ".go") {
		if m, _ := filepath.Glob(full); len(m) > 0 {
			pkg, full = filepath.Dir(pkg), filepath.Dir(full)
		}
	}
	fi, err := os.Stat(full)
	if err != nil {
		return "", false
	}
	if !fi.IsDir() {
		if !strings.HasSuffix(pkg, ".go") {
			return "", false
		}
		pkg = filepath.Dir(pkg)
		full = filepath.Dir(full)
	}
	if m, _ := filepath.Glob(filepath.Join(full, "*.go")); len(m) == 0 {
		return "", false
	}
	return filepath.ToSlash(pkg), true
}

// goModule is the Go module a project's code belongs to: its root
// directory and path, and the modules its go.mod replaces with local
// directories (an api/ module beside the manager's), by path.
type goModule struct {
	Root, Path string
	Local      map[string]string
}

// maxGoModBytes bounds the go.mod opctl reads.
const maxGoModBytes = 1 << 20

// findModule reads the go.mod of dir or of its nearest parent that has
// one; nil when there is none.
func findModule(dir string) *goModule {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	for d := abs; ; d = filepath.Dir(d) {
		gomod := filepath.Join(d, "go.mod")
		if fi, err := os.Stat(gomod); err == nil && fi.Mode().IsRegular() {
			if fi.Size() > maxGoModBytes {
				return nil
			}
			b, err := os.ReadFile(gomod)
			if err != nil {
				return nil
			}
			path := modfile.ModulePath(b)
			if path == "" {
				return nil
			}
			m := &goModule{Root: d, Path: path, Local: localReplaces(b, d)}
			return m
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// localReplaces reads the replace directives of a go.mod whose target is
// a directory, line by line: a full parse of a large go.mod costs more
// than the rest of the detection.
func localReplaces(b []byte, root string) map[string]string {
	out := map[string]string{}
	if !bytes.Contains(b, []byte("=>")) {
		return out
	}
	block := false
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "//")
		line = strings.TrimSpace(line)
		switch {
		case line == "replace (":
			block = true
			continue
		case block && line == ")":
			block = false
			continue
		case strings.HasPrefix(line, "replace "):
			line = strings.TrimPrefix(line, "replace ")
		case !block:
			continue
		}
		old, repl, ok := strings.Cut(line, "=>")
		of, rf := strings.Fields(old), strings.Fields(repl)
		if !ok || len(of) == 0 || len(rf) == 0 {
			continue
		}
		if target := strings.Trim(rf[0], `"`); modfile.IsDirectoryPath(target) {
			out[strings.Trim(of[0], `"`)] = filepath.Join(root, filepath.FromSlash(target))
		}
	}
	return out
}

// dirOf is the directory of an import path inside the module or one of
// its local replacements; false for any other package.
func (m *goModule) dirOf(importPath string) (string, bool) {
	if m == nil {
		return "", false
	}
	if importPath == m.Path || strings.HasPrefix(importPath, m.Path+"/") {
		return filepath.Join(m.Root, filepath.FromSlash(strings.TrimPrefix(importPath, m.Path))), true
	}
	best := ""
	for old := range m.Local {
		if (importPath == old || strings.HasPrefix(importPath, old+"/")) && len(old) > len(best) {
			best = old
		}
	}
	if best == "" {
		return "", false
	}
	return filepath.Join(m.Local[best], filepath.FromSlash(strings.TrimPrefix(importPath, best))), true
}
