package packaging

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// csvMarkerName is operator-sdk's marker for owned CRDs: on a type it
// carries displayName and resources, on a field a descriptor.
const csvMarkerName = "operator-sdk:csv:customresourcedefinitions"

// csvKindMarker and csvFieldMarker have the shape of operator-sdk's marker
// definitions, so controller-tools parses the markers with the grammar the
// projects were written against: resources={{Kind,version(,name)?},...}.
type csvKindMarker struct {
	Resources   [][]string `marker:",optional"`
	DisplayName string     `marker:",optional"`
	Order       *int       `marker:",optional"`
}

type csvFieldMarker struct {
	Type         string   `marker:",optional"`
	DisplayName  string   `marker:",optional"`
	XDescriptors []string `marker:",optional"`
	Order        *int     `marker:",optional"`
}

var (
	csvKindDef  = markers.Must(markers.MakeDefinition(csvMarkerName, markers.DescribesType, csvKindMarker{}))
	csvFieldDef = markers.Must(markers.MakeDefinition(csvMarkerName, markers.DescribesField, csvFieldMarker{}))
)

// loadMarkers reads the CSV markers of the project's API types with the Go
// parser (nothing is built): the kind-level displayName and resources, and
// the spec and status descriptors of marked fields, with paths from their
// JSON names. The result is keyed by group/version/kind. A marker that
// does not parse is left out with a warning naming its file and line.
func loadMarkers(dir string, pf *ProjectFile) (map[string]operatorsv1alpha1.CRDDescription, []string, error) {
	out := map[string]operatorsv1alpha1.CRDDescription{}
	var warnings []string
	for _, d := range apiDirs(dir, pf) {
		w, err := markersIn(dir, d, pf, out)
		if err != nil {
			return nil, nil, err
		}
		warnings = append(warnings, w...)
	}
	return out, warnings, nil
}

// apiDirs are the packages of the PROJECT file's resources, else every
// directory under api/ and apis/ with Go files, sorted.
func apiDirs(dir string, pf *ProjectFile) []string {
	var dirs []string
	if pf != nil {
		for _, r := range pf.Resources {
			if d := pf.apiDir(r); d != "" && !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	if len(dirs) == 0 {
		for _, root := range []string{"api", "apis"} {
			_ = filepath.WalkDir(filepath.Join(dir, root), func(path string, e os.DirEntry, err error) error {
				if err == nil && !e.IsDir() && strings.HasSuffix(path, ".go") {
					rel, _ := filepath.Rel(dir, filepath.Dir(path))
					if !slices.Contains(dirs, rel) {
						dirs = append(dirs, rel)
					}
				}
				return nil
			})
		}
	}
	slices.Sort(dirs)
	return dirs
}

// goPackage is one parsed API package.
type goPackage struct {
	group, version string
	types          map[string]*ast.TypeSpec
	docs           map[string][]*ast.CommentGroup
	fset           *token.FileSet
	// warnings are the markers left out, with their positions; orders
	// the order= of descriptors by type/path.
	warnings []string
	orders   map[string]int
}

func parseAPIPackage(dir, rel string, pf *ProjectFile) (*goPackage, error) {
	files, _ := filepath.Glob(filepath.Join(dir, rel, "*.go"))
	slices.Sort(files)
	pkg := &goPackage{types: map[string]*ast.TypeSpec{}, docs: map[string][]*ast.CommentGroup{}, fset: token.NewFileSet(), orders: map[string]int{}}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(filepath.Base(f), "zz_generated") {
			continue
		}
		file, err := parser.ParseFile(pkg.fset, f, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("reading operator-sdk markers: %w", err)
		}
		pkg.version = file.Name.Name
		if file.Doc != nil {
			for _, c := range file.Doc.List {
				if g, ok := strings.CutPrefix(c.Text, "// +groupName="); ok {
					pkg.group = strings.TrimSpace(g)
				}
			}
		}
		prevEnd := file.Name.End()
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if ok && gd.Tok == token.TYPE {
				// Type markers may sit in any comment group since the
				// previous declaration, not only the adjacent doc comment
				// (kubebuilder's scaffold puts +kubebuilder:object:root
				// and the CSV markers a blank line above it).
				above := commentsBetween(file.Comments, prevEnd, gd.Pos())
				for _, s := range gd.Specs {
					ts := s.(*ast.TypeSpec)
					pkg.types[ts.Name.Name] = ts
					if len(gd.Specs) == 1 {
						pkg.docs[ts.Name.Name] = above
					} else if ts.Doc != nil {
						pkg.docs[ts.Name.Name] = []*ast.CommentGroup{ts.Doc}
					}
				}
			}
			prevEnd = decl.End()
		}
	}
	if pkg.group == "" && pf != nil {
		for _, r := range pf.Resources {
			if pf.apiDir(r) == rel {
				pkg.group = r.group(pf.Domain)
			}
		}
	}
	return pkg, nil
}

// commentsBetween are the comment groups that lie between from and to.
func commentsBetween(all []*ast.CommentGroup, from, to token.Pos) []*ast.CommentGroup {
	var out []*ast.CommentGroup
	for _, cg := range all {
		if cg.Pos() > from && cg.End() <= to {
			out = append(out, cg)
		}
	}
	return out
}

func markersIn(dir, rel string, pf *ProjectFile, out map[string]operatorsv1alpha1.CRDDescription) ([]string, error) {
	pkg, err := parseAPIPackage(dir, rel, pf)
	if err != nil || pkg.group == "" {
		return nil, err
	}
	for _, name := range sortedKeys(pkg.types) {
		st, ok := pkg.types[name].Type.(*ast.StructType)
		if !ok {
			continue
		}
		d := operatorsv1alpha1.CRDDescription{Kind: name, Version: pkg.version}
		found := pkg.kindMarkers(&d, pkg.docs[name]...)
		for _, f := range st.Fields.List {
			switch jsonName(f) {
			case "spec", "status":
				found = pkg.fieldMarkers(&d, f.Type, "", 0) > 0 || found
			}
		}
		if found {
			pkg.sortDescriptors(&d)
			out[pkg.group+"/"+pkg.version+"/"+name] = d
		}
	}
	return pkg.warnings, nil
}

// kindMarkers applies the type's CSV markers to d: the first displayName,
// and every resource, as operator-sdk merges them.
func (pkg *goPackage) kindMarkers(d *operatorsv1alpha1.CRDDescription, groups ...*ast.CommentGroup) bool {
	found := false
	for _, c := range commentsOf(groups) {
		v, ok := pkg.parse(csvKindDef, c)
		if !ok {
			continue
		}
		m := v.(csvKindMarker)
		found = true
		if d.DisplayName == "" {
			d.DisplayName = m.DisplayName
		}
		for _, r := range m.Resources {
			if len(r) < 2 || len(r) > 3 || strings.TrimSpace(r[0]) == "" || strings.TrimSpace(r[1]) == "" {
				pkg.warn(c, fmt.Errorf("resources entry %q: want {Kind,version} or {Kind,version,name}", r))
				continue
			}
			ref := operatorsv1alpha1.APIResourceReference{Kind: strings.TrimSpace(r[0]), Version: strings.TrimSpace(r[1])}
			if len(r) == 3 {
				ref.Name = strings.TrimSpace(r[2])
			}
			d.Resources = append(d.Resources, ref)
		}
	}
	return found
}

// parse reads one comment as the marker def, reporting whether it is one.
// A marker that does not parse is left out with a warning.
func (pkg *goPackage) parse(def *markers.Definition, c *ast.Comment) (any, bool) {
	text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
	rest, ok := strings.CutPrefix(text, "+"+csvMarkerName)
	if !ok || (rest != "" && rest[0] != ':' && rest[0] != '=') {
		return nil, false
	}
	v, err := def.Parse(text)
	if err != nil {
		pkg.warn(c, err)
		return nil, false
	}
	return v, true
}

func (pkg *goPackage) warn(c *ast.Comment, err error) {
	pos := pkg.fset.Position(c.Pos())
	pkg.warnings = append(pkg.warnings, fmt.Sprintf("%s:%d: marker %s: %v: left out of the CSV; fix the marker as operator-sdk's reference describes", pos.Filename, pos.Line, strings.TrimSpace(strings.TrimPrefix(c.Text, "//")), err))
}

// fieldMarkers adds the descriptors of the marked fields of type expr,
// recursing into struct types of the package.
func (pkg *goPackage) fieldMarkers(d *operatorsv1alpha1.CRDDescription, expr ast.Expr, prefix string, depth int) int {
	if star, ok := expr.(*ast.StarExpr); ok {
		expr = star.X
	}
	id, ok := expr.(*ast.Ident)
	if !ok || depth > 8 {
		return 0
	}
	ts, ok := pkg.types[id.Name]
	if !ok {
		return 0
	}
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		return 0
	}
	n := 0
	for _, f := range st.Fields.List {
		name := jsonName(f)
		if name == "-" {
			continue
		}
		path := prefix
		if name != "" { // "" is an inlined field
			path = strings.TrimPrefix(prefix+"."+name, ".")
		}
		if f.Doc != nil {
			n += pkg.descriptors(d, path, f.Doc)
		}
		n += pkg.fieldMarkers(d, f.Type, path, depth+1)
	}
	return n
}

// sortDescriptors puts descriptors with order= first, by order, keeping
// the fields' order otherwise.
func (pkg *goPackage) sortDescriptors(d *operatorsv1alpha1.CRDDescription) {
	order := func(key string) int {
		if o, ok := pkg.orders[key]; ok {
			return o
		}
		return math.MaxInt
	}
	slices.SortStableFunc(d.SpecDescriptors, func(a, b operatorsv1alpha1.SpecDescriptor) int {
		return cmp.Compare(order("spec/"+a.Path), order("spec/"+b.Path))
	})
	slices.SortStableFunc(d.StatusDescriptors, func(a, b operatorsv1alpha1.StatusDescriptor) int {
		return cmp.Compare(order("status/"+a.Path), order("status/"+b.Path))
	})
}

// descriptors adds a field's spec and status descriptors: operator-sdk
// makes one for each type its markers name, merging their xDescriptors.
func (pkg *goPackage) descriptors(d *operatorsv1alpha1.CRDDescription, path string, doc *ast.CommentGroup) int {
	byType := map[string]*csvFieldMarker{}
	var types []string
	for _, c := range doc.List {
		v, ok := pkg.parse(csvFieldDef, c)
		if !ok {
			continue
		}
		m := v.(csvFieldMarker)
		if m.Type != "spec" && m.Type != "status" {
			pkg.warn(c, fmt.Errorf("type=%q: a field marker needs type=spec or type=status", m.Type))
			continue
		}
		if path == "" {
			pkg.warn(c, fmt.Errorf("an inlined field has no path of its own"))
			continue
		}
		acc, seen := byType[m.Type]
		if !seen {
			acc = &csvFieldMarker{}
			byType[m.Type] = acc
			types = append(types, m.Type)
		}
		if acc.DisplayName == "" {
			acc.DisplayName = m.DisplayName
		}
		if m.Order != nil {
			acc.Order = m.Order
		}
		acc.XDescriptors = append(acc.XDescriptors, m.XDescriptors...)
	}
	text := docText(doc)
	for _, typ := range types {
		m := byType[typ]
		display := firstNonEmpty(m.DisplayName, displayName(path[strings.LastIndex(path, ".")+1:]))
		if typ == "spec" {
			d.SpecDescriptors = append(d.SpecDescriptors, operatorsv1alpha1.SpecDescriptor{Path: path, DisplayName: display, Description: text, XDescriptors: m.XDescriptors})
		} else {
			d.StatusDescriptors = append(d.StatusDescriptors, operatorsv1alpha1.StatusDescriptor{Path: path, DisplayName: display, Description: text, XDescriptors: m.XDescriptors})
		}
		if m.Order != nil {
			pkg.orders[typ+"/"+path] = *m.Order
		}
	}
	return len(types)
}

// jsonName is the field's JSON name: the tag's, "" for an inlined or
// embedded field, or the Go name.
func jsonName(f *ast.Field) string {
	if f.Tag != nil {
		tag, _ := strconv.Unquote(f.Tag.Value)
		name, opts, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
		if name == "" && strings.Contains(opts, "inline") {
			return ""
		}
		if name != "" {
			return name
		}
	}
	if len(f.Names) == 0 {
		return ""
	}
	return f.Names[0].Name
}

// docText is a doc comment without its marker lines, on one line.
func docText(cg *ast.CommentGroup) string {
	if cg == nil {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(cg.Text(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "+") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, " ")
}

func commentsOf(groups []*ast.CommentGroup) []*ast.Comment {
	var out []*ast.Comment
	for _, g := range groups {
		if g != nil {
			out = append(out, g.List...)
		}
	}
	return out
}
