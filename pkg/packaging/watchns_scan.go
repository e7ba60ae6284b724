package packaging

import (
	"go/ast"
	"go/token"
	"opctl.dev/opctl/internal/lazyre"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

var (
	// watchEnv matches env variables that name the namespaces to watch:
	// WATCH_NAMESPACE, WATCH_NAMESPACES, WATCHED_NAMESPACES,
	// TARGET_NAMESPACE, KUBERAY_WATCH_NAMESPACE, ...
	watchEnv = lazyre.New(`^([A-Z0-9]+_)*(WATCH(ED)?|TARGET)_?NAMESPACES?$`)
	// namespaceEnv matches any env variable about a namespace, a source
	// only when it feeds the cache's namespaces.
	namespaceEnv = lazyre.New(`^[A-Z0-9_]*NAMESPACE[A-Z0-9_]*$`)
	// watchFlag matches the flags that name them: --namespace,
	// --namespaces, --watch-namespace, --watched-namespaces, ...
	watchFlag = lazyre.New(`^((watch(ed)?|target)[-_]?)?namespaces?$`)
	structTag = lazyre.New(`([A-Za-z_]+):"([^"]*)"`)
)

// flagFuncs define string flags in the standard library's flag, pflag
// (cobra) and kingpin-like packages; list is true for list flags.
var flagFuncs = map[string]bool{
	"String": false, "StringVar": false, "StringP": false, "StringVarP": false,
	"StringSlice": true, "StringSliceVar": true, "StringSliceP": true, "StringSliceVarP": true,
	"StringArray": true, "StringArrayVar": true, "StringArrayP": true, "StringArrayVarP": true,
}

// splitFuncs split a string on a separator.
var splitFuncs = map[string]bool{"Split": true, "SplitN": true, "SplitSeq": true, "SplitAfter": true, "FieldsFunc": true}

type found struct{ name, where string }

// watchScan gathers evidence over the files of one detection.
type watchScan struct {
	dir  string
	fset *token.FileSet
	// envs and flags name the namespaces to watch by themselves;
	// nsEnvs are other namespace variables read, which only make a comma
	// split beside them a list: flow says which of them feed the cache.
	envs, flags, nsEnvs, caches []found
	list                        bool
	flow                        *flowGraph
	// modDir is the directory of a module package's import path.
	modDir func(string) (string, bool)
	// imports of the file being scanned: local name → path; path is its
	// file.
	imports map[string]string
	path    string
}

func newWatchScan(dir string, modDir func(string) (string, bool)) *watchScan {
	return &watchScan{dir: dir, fset: token.NewFileSet(), flow: newFlowGraph(), modDir: modDir}
}

// dirOf is the directory of a package of the module, by import path.
func (s *watchScan) dirOf(imp string) (string, bool) {
	if s.modDir == nil || skippedImport(imp) {
		return "", false
	}
	d, ok := s.modDir(imp)
	if !ok {
		return "", false
	}
	abs, err := filepath.Abs(d)
	return abs, err == nil
}

// result is the settings found, whether one takes a list, and where the
// cache's namespaces are set with no setting that feeds them. Settings
// named like a watch namespace count wherever they are read; other env
// variables and flags only when their values reach the cache's
// namespaces.
func (s *watchScan) result() ([]WatchSetting, bool, string) {
	var out []WatchSetting
	add := func(kind string, fs []found) {
		for _, f := range fs {
			out = append(out, WatchSetting{Kind: kind, Name: f.name, Where: f.where})
		}
	}
	add("env", s.envs)
	add("flag", s.flags)
	for _, t := range s.flow.terminals(s.flow.caches) {
		kind, name, _ := strings.Cut(t, ":")
		if kind == "flag" || namespaceEnv().MatchString(name) {
			out = append(out, WatchSetting{Kind: kind, Name: name, Where: s.flow.where[t]})
		}
	}
	if len(out) == 0 {
		if len(s.caches) > 0 {
			return nil, false, s.caches[0].name + " at " + s.caches[0].where
		}
		return nil, false, ""
	}
	add("cache", s.caches)
	seen := map[string]bool{}
	kept := out[:0]
	for _, w := range out {
		if k := w.Kind + ":" + w.Name; !seen[k] {
			seen[k] = true
			kept = append(kept, w)
		}
	}
	return kept, s.list, ""
}

// webhookEnvs are the env variables read that switch the webhook server
// on or off (ENABLE_WEBHOOKS).
func (s *watchScan) webhookEnvs() []WatchSetting {
	var out []WatchSetting
	for _, t := range s.flow.terminals(s.flow.reads) {
		if name := strings.TrimPrefix(t, "env:"); webhookEnv().MatchString(name) {
			out = append(out, WatchSetting{Kind: "env", Name: name, Where: s.flow.where[t]})
		}
	}
	return out
}

// importName is the name a package is imported under by default: its
// path's last element, without a major version or a gopkg.in suffix, and
// controller-runtime's own package name.
func importName(p string) string {
	if p == "sigs.k8s.io/controller-runtime" {
		return "controllerruntime"
	}
	base := path.Base(p)
	if strings.HasPrefix(base, "v") && len(base) > 1 && strings.Trim(base[1:], "0123456789") == "" && path.Dir(p) != "." {
		base = path.Base(path.Dir(p))
	}
	if i := strings.Index(base, ".v"); i > 0 {
		base = base[:i]
	}
	return strings.TrimPrefix(base, "go-")
}

// scan looks for evidence in a parsed file.
func (s *watchScan) scan(f *ast.File) {
	s.imports = map[string]string{}
	for _, is := range f.Imports {
		p, err := strconv.Unquote(is.Path.Value)
		if err != nil {
			continue
		}
		name := importName(p)
		if is.Name != nil {
			name = is.Name.Name
		}
		s.imports[name] = p
	}
	for _, d := range f.Decls {
		s.flowDecl(d, s.path)
		fd, isFunc := d.(*ast.FuncDecl)
		before := len(s.envs) + len(s.flags) + len(s.nsEnvs) + len(s.caches)
		var splits []bool // per comma split: its argument is about namespaces
		var stack []ast.Node
		ast.Inspect(d, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			if about, ok := s.node(n, stack); ok {
				splits = append(splits, about)
			}
			stack = append(stack, n)
			return true
		})
		evidence := len(s.envs)+len(s.flags)+len(s.nsEnvs)+len(s.caches) > before
		named := isFunc && strings.Contains(strings.ToLower(fd.Name.Name), "namespace")
		for _, about := range splits {
			if about || evidence || named {
				s.list = true
			}
		}
	}
}

// pkgOf is the import path of an identifier used as a package name.
func (s *watchScan) pkgOf(x ast.Expr) string {
	if id, ok := x.(*ast.Ident); ok {
		return s.imports[id.Name]
	}
	return ""
}

// node records the evidence of one node, below stack; for a comma split
// it returns whether its argument is about namespaces, and true.
func (s *watchScan) node(n ast.Node, stack []ast.Node) (about, split bool) {
	switch n := n.(type) {
	case *ast.BasicLit:
		if n.Kind == token.STRING {
			if v, err := strconv.Unquote(n.Value); err == nil && watchEnv().MatchString(v) {
				s.envs = append(s.envs, found{v, s.where(n.Pos())})
			}
		}
	case *ast.Field:
		if n.Tag != nil {
			tag, _ := strconv.Unquote(n.Tag.Value)
			for _, m := range structTag().FindAllStringSubmatch(tag, -1) {
				v, _, _ := strings.Cut(m[2], ",")
				switch {
				case watchEnv().MatchString(v):
					s.envs = append(s.envs, found{v, s.where(n.Tag.Pos())})
				}
			}
		}
	case *ast.CallExpr:
		return s.call(n)
	case *ast.CompositeLit:
		sel, ok := n.Type.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Options" {
			return false, false
		}
		pkg := s.pkgOf(sel.X)
		for _, e := range n.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, ok := kv.Key.(*ast.Ident)
			if !ok {
				continue
			}
			switch {
			case strings.HasSuffix(pkg, "controller-runtime/pkg/cache") && (key.Name == "Namespaces" || key.Name == "DefaultNamespaces"):
				s.caches = append(s.caches, found{key.Name, s.where(kv.Pos())})
				s.cacheSink(append(stack, n), kv.Value, s.path)
			case (pkg == "sigs.k8s.io/controller-runtime" || strings.HasSuffix(pkg, "controller-runtime/pkg/manager")) && key.Name == "Namespace":
				s.caches = append(s.caches, found{"Namespace", s.where(kv.Pos())})
				s.cacheSink(append(stack, n), kv.Value, s.path)
			}
		}
	case *ast.SelectorExpr:
		switch n.Sel.Name {
		case "DefaultNamespaces", "MultiNamespacedCacheBuilder":
			s.caches = append(s.caches, found{n.Sel.Name, s.where(n.Pos())})
			s.cacheSink(stack, nil, s.path)
		case "WatchNamespaceEnvVar", "GetWatchNamespace":
			// operator-sdk's k8sutil, or a copy of it: WATCH_NAMESPACE.
			if pkg := s.pkgOf(n.X); pkg != "" {
				s.envs = append(s.envs, found{"WATCH_NAMESPACE", s.where(n.Pos())})
			}
		}
	}
	return false, false
}

// call records flags, namespace env reads and comma splits.
func (s *watchScan) call(c *ast.CallExpr) (about, split bool) {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return false, false
	}
	name := sel.Sel.Name
	if list, ok := flagFuncs[name]; ok {
		for i := 0; i < 2 && i < len(c.Args); i++ {
			if v, ok := stringLit(c.Args[i]); ok && watchFlag().MatchString(v) {
				s.flags = append(s.flags, found{"--" + v, s.where(c.Pos())})
				s.list = s.list || list
				break
			}
		}
		return false, false
	}
	switch pkg := s.pkgOf(sel.X); {
	case pkg == "os" && (name == "Getenv" || name == "LookupEnv") && len(c.Args) == 1:
		if v, ok := stringLit(c.Args[0]); ok && namespaceEnv().MatchString(v) && !watchEnv().MatchString(v) {
			s.nsEnvs = append(s.nsEnvs, found{v, s.where(c.Pos())})
		}
	case pkg == "strings" && splitFuncs[name] && len(c.Args) >= 2:
		if v, ok := stringLit(c.Args[1]); ok && v == "," {
			return strings.Contains(strings.ToLower(exprText(c.Args[0])), "namespace"), true
		}
	}
	return false, false
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(lit.Value)
	return v, err == nil
}

// exprText is the identifiers of an expression, dotted (cfg.WatchNamespace).
func exprText(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprText(e.X) + "." + e.Sel.Name
	case *ast.CallExpr:
		return exprText(e.Fun)
	case *ast.StarExpr:
		return exprText(e.X)
	}
	return ""
}
