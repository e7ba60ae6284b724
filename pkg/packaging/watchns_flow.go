package packaging

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"opctl.dev/opctl/internal/lazyre"
)

// webhookEnv matches env variables that switch the webhook server on or
// off: ENABLE_WEBHOOKS (the kubebuilder and operator-sdk convention),
// DISABLE_WEBHOOKS, ENABLE_WEBHOOK.
var webhookEnv = lazyre.New(`^([A-Z0-9]+_)*(ENABLE|DISABLE)_WEBHOOKS?$`)

// flowGraph follows, by names only (no types), which values feed which:
// what the cache's namespaces and the env reads take their values from.
// Nodes are strings:
//
//	env:NAME, flag:--name  a setting (terminal)
//	loc:<func>:<x>         a local variable of one function
//	var:<dir>:<x>          a package-level variable or constant
//	fn:<dir>:<F>           what function F returns
//	meth:<M>               what any method M returns
//	field:<F>              any struct field F
//	arg:<fn or meth>:<i>   what the i-th argument of a function is given
type flowGraph struct {
	from map[string]map[string]bool
	// where is the first place each terminal was seen.
	where map[string]string
	// caches are the nodes the cache's namespaces take their values from;
	// reads those os.Getenv and os.LookupEnv read.
	caches, reads []string
}

func newFlowGraph() *flowGraph {
	return &flowGraph{from: map[string]map[string]bool{}, where: map[string]string{}}
}

// terminal records where a setting's node was first seen.
func (g *flowGraph) terminal(n, where string) string {
	if _, ok := g.where[n]; !ok {
		g.where[n] = where
	}
	return n
}

// edge records that node to takes its value from the nodes from.
func (g *flowGraph) edge(to string, from []string) {
	if to == "" || len(from) == 0 {
		return
	}
	m := g.from[to]
	if m == nil {
		m = map[string]bool{}
		g.from[to] = m
	}
	for _, f := range from {
		if f != to {
			m[f] = true
		}
	}
}

// terminals are the settings the nodes take their values from, in the
// order first found.
func (g *flowGraph) terminals(nodes []string) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(string)
	walk = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		if strings.HasPrefix(n, "env:") || strings.HasPrefix(n, "flag:") {
			out = append(out, n)
			return
		}
		for _, f := range sortedKeys(g.from[n]) {
			walk(f)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	slices.SortStableFunc(out, func(a, b string) int { return compareWhere(g.where[a], g.where[b]) })
	return out
}

// compareWhere orders file:line places by file, then line.
func compareWhere(a, b string) int {
	fa, la, _ := strings.Cut(a, ":")
	fb, lb, _ := strings.Cut(b, ":")
	if c := strings.Compare(fa, fb); c != 0 {
		return c
	}
	na, _ := strconv.Atoi(la)
	nb, _ := strconv.Atoi(lb)
	return na - nb
}

// funcFlow is the scan of one function declaration.
type funcFlow struct {
	s      *watchScan
	id     string // loc:<file:offset>:
	dir    string
	fn     string // the fn: or meth: node of its results
	locals map[string]bool
}

// flowFunc records the edges of a function declaration.
func (s *watchScan) flowFunc(fd *ast.FuncDecl, dir string) {
	f := &funcFlow{s: s, dir: dir, locals: map[string]bool{}, id: "loc:" + s.fset.Position(fd.Pos()).String() + ":"}
	f.fn = "fn:" + dir + ":" + fd.Name.Name
	if fd.Recv != nil {
		f.fn = "meth:" + fd.Name.Name
	}
	i := 0
	for _, fl := range fd.Type.Params.List {
		names := fl.Names
		if len(names) == 0 {
			i++
			continue
		}
		for _, n := range names {
			s.flow.edge(f.id+n.Name, []string{f.fn + ":" + strconv.Itoa(i)})
			i++
		}
	}
	if fd.Type.Results != nil {
		for _, fl := range fd.Type.Results.List {
			for _, n := range fl.Names {
				s.flow.edge(f.fn, []string{f.id + n.Name})
			}
		}
	}
	collectLocals(fd, f.locals)
	if fd.Body != nil {
		f.body(fd.Body)
	}
}

// body records the edges of the statements of a function.
func (f *funcFlow) body(body ast.Node) {
	g := f.s.flow
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			f.assign(n.Lhs, n.Rhs)
		case *ast.ValueSpec:
			lhs := make([]ast.Expr, len(n.Names))
			for i, id := range n.Names {
				lhs[i] = id
			}
			f.assign(lhs, n.Values)
		case *ast.RangeStmt:
			from := f.mentions(n.X)
			g.edge(f.node(n.Key), from)
			g.edge(f.node(n.Value), from)
		case *ast.ReturnStmt:
			for _, r := range n.Results {
				g.edge(f.fn, f.mentions(r))
			}
		case *ast.CallExpr:
			f.call(n)
		case *ast.CompositeLit:
			f.composite(n)
		}
		return true
	})
}

// assign records that each left-hand side takes its value from its
// right-hand side, or from all of them.
func (f *funcFlow) assign(lhs, rhs []ast.Expr) {
	g := f.s.flow
	for i, l := range lhs {
		var from []string
		if len(lhs) == len(rhs) {
			from = f.mentions(rhs[i])
		} else {
			for _, r := range rhs {
				from = append(from, f.mentions(r)...)
			}
		}
		if ix, ok := l.(*ast.IndexExpr); ok { // m[ns] = v: m takes ns too
			from = append(from, f.mentions(ix.Index)...)
		}
		g.edge(f.node(l), from)
	}
}

// call records what a module function's arguments are given, flags
// bound to variables, and env reads.
func (f *funcFlow) call(c *ast.CallExpr) {
	g := f.s.flow
	if key := f.callee(c.Fun); key != "" {
		for i, a := range c.Args {
			g.edge(key+":"+strconv.Itoa(i), f.mentions(a))
		}
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return
	}
	if name := sel.Sel.Name; strings.HasSuffix(name, "Var") || strings.HasSuffix(name, "VarP") {
		if name, ok := f.flagName(c); ok && len(c.Args) > 0 {
			if u, ok := c.Args[0].(*ast.UnaryExpr); ok && u.Op == token.AND {
				g.edge(f.node(u.X), []string{name})
			}
		}
	}
	if pkg := f.s.pkgOf(sel.X); pkg == "os" && (sel.Sel.Name == "Getenv" || sel.Sel.Name == "LookupEnv") && len(c.Args) == 1 {
		g.reads = append(g.reads, f.mentions(c.Args[0])...)
	}
}

// flagName is the flag:--name node of a string flag definition.
func (f *funcFlow) flagName(c *ast.CallExpr) (string, bool) {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	if _, ok := flagFuncs[sel.Sel.Name]; !ok {
		return "", false
	}
	for i := 0; i < 2 && i < len(c.Args); i++ {
		if v, ok := stringLit(c.Args[i]); ok && v != "" && !strings.ContainsAny(v, " =") {
			return f.s.flow.terminal("flag:--"+v, f.s.where(c.Pos())), true
		}
	}
	return "", false
}

// composite records the fields a struct literal sets.
func (f *funcFlow) composite(c *ast.CompositeLit) {
	if _, isMap := c.Type.(*ast.MapType); isMap {
		return
	}
	for _, e := range c.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if key, ok := kv.Key.(*ast.Ident); ok {
				f.s.flow.edge("field:"+key.Name, f.mentions(kv.Value))
			}
		}
	}
}

// callee is the fn: or meth: node of a called module function or method,
// or "" for a function outside the module.
func (f *funcFlow) callee(fun ast.Expr) string {
	switch fun := fun.(type) {
	case *ast.Ident:
		if !f.locals[fun.Name] {
			return "fn:" + f.dir + ":" + fun.Name
		}
	case *ast.SelectorExpr:
		if id, ok := fun.X.(*ast.Ident); ok && !f.locals[id.Name] {
			if p, ok := f.s.imports[id.Name]; ok {
				if d, ok := f.s.dirOf(p); ok {
					return "fn:" + d + ":" + fun.Sel.Name
				}
				return ""
			}
		}
		return "meth:" + fun.Sel.Name
	}
	return ""
}

// node is the node an assignment's left-hand side writes.
func (f *funcFlow) node(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		switch {
		case e.Name == "_":
			return ""
		case f.locals[e.Name]:
			return f.id + e.Name
		}
		return "var:" + f.dir + ":" + e.Name
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok && !f.locals[id.Name] {
			if p, ok := f.s.imports[id.Name]; ok {
				if d, ok := f.s.dirOf(p); ok {
					return "var:" + d + ":" + e.Sel.Name
				}
				return ""
			}
		}
		return "field:" + e.Sel.Name
	case *ast.IndexExpr:
		return f.node(e.X)
	case *ast.StarExpr:
		return f.node(e.X)
	case *ast.ParenExpr:
		return f.node(e.X)
	}
	return ""
}

// mentions are the nodes an expression takes its value from.
func (f *funcFlow) mentions(e ast.Expr) []string {
	var out []string
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.BasicLit:
			if t := f.s.envTerminal(n); t != "" {
				out = append(out, t)
			}
		case *ast.Ident:
			out = append(out, f.node(n))
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && !f.locals[id.Name] {
				if _, isPkg := f.s.imports[id.Name]; isPkg {
					out = append(out, f.node(n))
					return false
				}
			}
			out = append(out, "field:"+n.Sel.Name)
			return false
		case *ast.CallExpr:
			if name, ok := f.flagName(n); ok {
				out = append(out, name)
			}
			if key := f.callee(n.Fun); key != "" {
				out = append(out, key)
			}
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				if _, isPkg := f.s.imports[exprText(sel.X)]; !isPkg {
					ast.Inspect(sel.X, func(m ast.Node) bool { // the receiver's own calls
						if c, ok := m.(*ast.CallExpr); ok {
							if key := f.callee(c.Fun); key != "" {
								out = append(out, key)
							}
						}
						return true
					})
				}
			}
			for _, a := range n.Args {
				out = append(out, f.mentions(a)...)
			}
			return false
		case *ast.KeyValueExpr:
			// A struct field's value is the field's (composite), a map
			// entry's key and value the map's.
			return true
		}
		return true
	})
	kept := out[:0]
	for _, o := range out {
		if o != "" {
			kept = append(kept, o)
		}
	}
	return kept
}

// envTerminal is the env:NAME node of a string literal naming a
// namespace or webhook env variable, "" for other literals.
func (s *watchScan) envTerminal(lit *ast.BasicLit) string {
	if lit.Kind != token.STRING {
		return ""
	}
	v, err := strconv.Unquote(lit.Value)
	if err != nil || !namespaceEnv().MatchString(v) && !webhookEnv().MatchString(v) {
		return ""
	}
	return s.flow.terminal("env:"+v, s.where(lit.Pos()))
}

// flowDecl records the edges of a package-level declaration: variables,
// constants and functions.
func (s *watchScan) flowDecl(d ast.Decl, file string) {
	dir := filepath.Dir(file)
	switch d := d.(type) {
	case *ast.FuncDecl:
		s.flowFunc(d, dir)
	case *ast.GenDecl:
		f := &funcFlow{s: s, dir: dir, locals: map[string]bool{}, id: "var:" + dir + ":"}
		for _, sp := range d.Specs {
			switch sp := sp.(type) {
			case *ast.ValueSpec:
				lhs := make([]ast.Expr, len(sp.Names))
				for i, id := range sp.Names {
					lhs[i] = id
				}
				f.assign(lhs, sp.Values)
				for _, v := range sp.Values {
					f.body(v)
				}
			case *ast.TypeSpec:
				f.tags(sp)
			}
		}
	}
}

// tags records the env variables that struct tags load into fields
// (env:"POD_NAMESPACE").
func (f *funcFlow) tags(sp *ast.TypeSpec) {
	st, ok := sp.Type.(*ast.StructType)
	if !ok {
		return
	}
	for _, fl := range st.Fields.List {
		if fl.Tag == nil || len(fl.Names) == 0 {
			continue
		}
		tag, _ := strconv.Unquote(fl.Tag.Value)
		for _, m := range structTag().FindAllStringSubmatch(tag, -1) {
			v, _, _ := strings.Cut(m[2], ",")
			if m[1] != "env" && m[1] != "envconfig" || !namespaceEnv().MatchString(v) && !webhookEnv().MatchString(v) {
				continue
			}
			n := f.s.flow.terminal("env:"+v, f.s.where(fl.Tag.Pos()))
			for _, id := range fl.Names {
				f.s.flow.edge("field:"+id.Name, []string{n})
			}
			f.s.flow.reads = append(f.s.flow.reads, n)
		}
	}
}

// cacheSink records that the cache's namespaces, set at n, take their
// value from the expression that sets them and from the conditions of the
// if statements around it (stack: n's ancestors in its declaration).
func (s *watchScan) cacheSink(stack []ast.Node, value ast.Expr, file string) {
	f := &funcFlow{s: s, dir: filepath.Dir(file), locals: map[string]bool{}}
	var fd *ast.FuncDecl
	for _, a := range stack {
		if d, ok := a.(*ast.FuncDecl); ok {
			fd = d
		}
	}
	if fd != nil {
		// The same nodes as flowFunc gave the function's locals.
		ff := &funcFlow{s: s, dir: f.dir, locals: map[string]bool{}, id: "loc:" + s.fset.Position(fd.Pos()).String() + ":"}
		collectLocals(fd, ff.locals)
		f = ff
	}
	var from []string
	found := value != nil
	if found {
		from = f.mentions(value)
	}
	for i := len(stack) - 1; i >= 0; i-- {
		switch a := stack[i].(type) {
		case *ast.AssignStmt:
			if !found {
				found = true
				for _, e := range append(append([]ast.Expr{}, a.Lhs...), a.Rhs...) {
					if ix, ok := e.(*ast.IndexExpr); ok {
						from = append(from, f.mentions(ix.Index)...)
					}
				}
				for _, r := range a.Rhs {
					from = append(from, f.mentions(r)...)
				}
			}
		case *ast.CallExpr:
			if !found {
				found = true
				for _, r := range a.Args {
					from = append(from, f.mentions(r)...)
				}
			}
		case *ast.IfStmt:
			from = append(from, f.mentions(a.Cond)...)
		case *ast.RangeStmt:
			from = append(from, f.mentions(a.X)...)
		}
	}
	s.flow.caches = append(s.flow.caches, from...)
}

// collectLocals names the variables a function declares.
func collectLocals(fd *ast.FuncDecl, locals map[string]bool) {
	for _, fl := range append(fieldList(fd.Recv), fieldList(fd.Type.Params)...) {
		for _, n := range fl.Names {
			locals[n.Name] = true
		}
	}
	for _, fl := range fieldList(fd.Type.Results) {
		for _, n := range fl.Names {
			locals[n.Name] = true
		}
	}
	if fd.Body == nil {
		return
	}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						locals[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				locals[id.Name] = true
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if id, ok := e.(*ast.Ident); ok && n.Tok == token.DEFINE {
					locals[id.Name] = true
				}
			}
		case *ast.FuncLit:
			for _, fl := range n.Type.Params.List {
				for _, id := range fl.Names {
					locals[id.Name] = true
				}
			}
		}
		return true
	})
}

func fieldList(l *ast.FieldList) []*ast.Field {
	if l == nil {
		return nil
	}
	return l.List
}
