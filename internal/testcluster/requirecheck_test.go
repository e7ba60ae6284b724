package testcluster

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Every test and benchmark that reaches the cluster or something a setup
// made (a client, a built binary) calls Require, itself or through a helper:
// the cluster is brought up by Require, so one that does not would
// dereference nil whenever no earlier test brought it up. This reads the
// test files of every package whose TestMain calls Main and names each
// offender, so a missing Require fails here, in unit mode too, rather than
// as a nil-pointer panic in some later run.
func TestClusterTestsRequire(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := parseTestPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	harnessed := 0
	for _, p := range pkgs {
		globals := p.setupGlobals()
		if len(globals) == 0 {
			continue
		}
		harnessed++
		for _, name := range p.names() {
			fd := p.funcs[name]
			if name == "TestMain" || !(strings.HasPrefix(name, "Test") || strings.HasPrefix(name, "Benchmark")) {
				continue
			}
			used := p.reaches(name, globals)
			if len(used) > 0 && !p.requires(name, map[string]bool{}) {
				t.Errorf("%s: %s uses %s without testcluster.Require", p.fset.Position(fd.Pos()), name, strings.Join(used, ", "))
			}
		}
	}
	// The packages that use the harness today; fewer means the parse
	// above stopped finding them.
	if harnessed < 7 {
		t.Errorf("found %d test packages whose TestMain calls testcluster.Main, want at least 7", harnessed)
	}
}

// testPackage is the test files of one package clause in one directory.
type testPackage struct {
	fset  *token.FileSet
	funcs map[string]*ast.FuncDecl
	// main is the call of testcluster.Main in TestMain, if any.
	main *ast.CallExpr
}

// parseTestPackages parses the _test.go files under root by directory and
// package clause, skipping testdata and hidden directories.
func parseTestPackages(root string) ([]*testPackage, error) {
	fset := token.NewFileSet()
	byKey := map[string]*testPackage{}
	var keys []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || n == "bin" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		key := filepath.Dir(path) + ":" + f.Name.Name
		p := byKey[key]
		if p == nil {
			p = &testPackage{fset: fset, funcs: map[string]*ast.FuncDecl{}}
			byKey[key] = p
			keys = append(keys, key)
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Body == nil {
				continue
			}
			p.funcs[fd.Name.Name] = fd
			if fd.Name.Name == "TestMain" {
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					if call, ok := n.(*ast.CallExpr); ok && isCall(call, "Main") {
						p.main = call
					}
					return true
				})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(keys)
	pkgs := make([]*testPackage, 0, len(keys))
	for _, k := range keys {
		pkgs = append(pkgs, byKey[k])
	}
	return pkgs, nil
}

// isCall reports whether call calls testcluster.<name>, or <name> inside
// package testcluster.
func isCall(call *ast.CallExpr, name string) bool {
	switch fun := call.Fun.(type) {
	case *ast.SelectorExpr:
		id, ok := fun.X.(*ast.Ident)
		return ok && id.Name == "testcluster" && fun.Sel.Name == name
	case *ast.Ident:
		return fun.Name == name
	}
	return false
}

// setupGlobals are the variables the harness fills: the one whose address
// TestMain gives Main, and those its setups (and the functions they call)
// assign.
func (p *testPackage) setupGlobals() map[string]bool {
	globals := map[string]bool{}
	if p.main == nil || len(p.main.Args) < 2 {
		return globals
	}
	if u, ok := p.main.Args[1].(*ast.UnaryExpr); ok {
		if id, ok := u.X.(*ast.Ident); ok {
			globals[id.Name] = true
		}
	}
	seen := map[string]bool{}
	// assigned adds what fn assigns that it does not declare itself, and
	// what the package's functions it calls assign.
	var assigned func(fn ast.Node)
	assigned = func(fn ast.Node) {
		local := declared(fn)
		sel := selected(fn)
		ast.Inspect(fn, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				if x.Tok == token.ASSIGN {
					for _, l := range x.Lhs {
						if id, ok := l.(*ast.Ident); ok && id.Name != "_" && !local[id.Name] {
							globals[id.Name] = true
						}
					}
				}
			case *ast.Ident:
				if fd := p.funcs[x.Name]; fd != nil && !sel[x] && !seen[x.Name] {
					seen[x.Name] = true
					assigned(fd)
				}
			}
			return true
		})
	}
	for _, arg := range p.main.Args[2:] {
		assigned(arg)
	}
	return globals
}

// declared are the names fn declares: parameters, := and var.
func declared(fn ast.Node) map[string]bool {
	names := map[string]bool{}
	ast.Inspect(fn, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Field:
			for _, id := range x.Names {
				names[id.Name] = true
			}
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE {
				for _, l := range x.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						names[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range x.Names {
				names[id.Name] = true
			}
		}
		return true
	})
	return names
}

func (p *testPackage) names() []string {
	names := make([]string, 0, len(p.funcs))
	for n := range p.funcs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// reaches lists the globals that name uses, itself or through the
// package's functions it calls (not shadowed by its own declarations).
func (p *testPackage) reaches(name string, globals map[string]bool) []string {
	used := map[string]bool{}
	seen := map[string]bool{}
	var walk func(string)
	walk = func(name string) {
		fd := p.funcs[name]
		if fd == nil || seen[name] || name == "TestMain" {
			return
		}
		seen[name] = true
		local := declared(fd)
		sel := selected(fd)
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && !sel[id] {
				if globals[id.Name] && !local[id.Name] && id.Name != "_" {
					used[id.Name] = true
				}
				if id.Name != name {
					walk(id.Name)
				}
			}
			return true
		})
	}
	walk(name)
	out := make([]string, 0, len(used))
	for g := range used {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// requires reports whether name calls Require, itself or through the
// package's functions it calls.
func (p *testPackage) requires(name string, seen map[string]bool) bool {
	fd := p.funcs[name]
	if fd == nil || seen[name] {
		return false
	}
	seen[name] = true
	found := false
	sel := selected(fd)
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			if isCall(x, "Require") {
				found = true
			}
		case *ast.Ident:
			if !sel[x] && x.Name != name && p.requires(x.Name, seen) {
				found = true
			}
		}
		return !found
	})
	return found
}

// selected are the identifiers of fn that name a field or method (x.Name),
// which are not the package's variables or functions.
func selected(fn ast.Node) map[*ast.Ident]bool {
	sel := map[*ast.Ident]bool{}
	ast.Inspect(fn, func(n ast.Node) bool {
		if x, ok := n.(*ast.SelectorExpr); ok {
			sel[x.Sel] = true
		}
		return true
	})
	return sel
}
