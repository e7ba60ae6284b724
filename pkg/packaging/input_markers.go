package packaging

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
)

// csvMarker starts operator-sdk's CSV markers on API types and fields.
const csvMarker = "+operator-sdk:csv:customresourcedefinitions:"

// loadMarkers reads the CSV markers of the project's API types with the Go
// parser (nothing is built): the kind-level displayName and resources, and
// the spec and status descriptors of marked fields, with paths from their
// JSON names. The result is keyed by group/version/kind.
func loadMarkers(dir string, pf *ProjectFile) (map[string]operatorsv1alpha1.CRDDescription, error) {
	out := map[string]operatorsv1alpha1.CRDDescription{}
	for _, d := range apiDirs(dir, pf) {
		if err := markersIn(dir, d, pf, out); err != nil {
			return nil, err
		}
	}
	return out, nil
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
}

func parseAPIPackage(dir, rel string, pf *ProjectFile) (*goPackage, error) {
	files, _ := filepath.Glob(filepath.Join(dir, rel, "*.go"))
	slices.Sort(files)
	pkg := &goPackage{types: map[string]*ast.TypeSpec{}, docs: map[string][]*ast.CommentGroup{}, fset: token.NewFileSet()}
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

func markersIn(dir, rel string, pf *ProjectFile, out map[string]operatorsv1alpha1.CRDDescription) error {
	pkg, err := parseAPIPackage(dir, rel, pf)
	if err != nil || pkg.group == "" {
		return err
	}
	for _, name := range sortedKeys(pkg.types) {
		st, ok := pkg.types[name].Type.(*ast.StructType)
		if !ok {
			continue
		}
		kindArgs, pos, err := pkg.markerArgs(pkg.docs[name]...)
		if err != nil {
			return err
		}
		d := operatorsv1alpha1.CRDDescription{Kind: name, Version: pkg.version}
		if err := applyKindMarker(&d, kindArgs); err != nil {
			return pkg.errorAt(pos, err)
		}
		found := len(kindArgs) > 0
		for _, f := range st.Fields.List {
			switch jsonName(f) {
			case "spec", "status":
				n, err := pkg.fieldMarkers(&d, f.Type, "", 0)
				if err != nil {
					return err
				}
				found = found || n > 0
			}
		}
		if found {
			out[pkg.group+"/"+pkg.version+"/"+name] = d
		}
	}
	return nil
}

// fieldMarkers adds the descriptors of the marked fields of type expr,
// recursing into struct types of the package.
func (pkg *goPackage) fieldMarkers(d *operatorsv1alpha1.CRDDescription, expr ast.Expr, prefix string, depth int) (int, error) {
	if star, ok := expr.(*ast.StarExpr); ok {
		expr = star.X
	}
	id, ok := expr.(*ast.Ident)
	if !ok || depth > 8 {
		return 0, nil
	}
	ts, ok := pkg.types[id.Name]
	if !ok {
		return 0, nil
	}
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		return 0, nil
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
		args, pos, err := pkg.markerArgs(f.Doc)
		if err != nil {
			return n, err
		}
		if len(args) > 0 {
			if err := addDescriptor(d, path, docText(f.Doc), args); err != nil {
				return n, pkg.errorAt(pos, err)
			}
			n++
		}
		k, err := pkg.fieldMarkers(d, f.Type, path, depth+1)
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

func (pkg *goPackage) errorAt(pos token.Pos, err error) error {
	return fmt.Errorf("%s: %w", pkg.fset.Position(pos), err)
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

// markerArgs gathers the arguments of the CSV markers in comment groups,
// in order.
func (pkg *goPackage) markerArgs(groups ...*ast.CommentGroup) ([][2]string, token.Pos, error) {
	var pos token.Pos
	var out [][2]string
	for _, c := range commentsOf(groups) {
		text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		rest, ok := strings.CutPrefix(text, csvMarker)
		if !ok {
			continue
		}
		args, err := splitMarkerArgs(rest)
		if err != nil {
			return nil, pos, pkg.errorAt(c.Pos(), fmt.Errorf("marker %s: %w", text, err))
		}
		out, pos = append(out, args...), c.Pos()
	}
	return out, pos, nil
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

// splitMarkerArgs splits key=value,key=value at the commas outside quotes
// and braces.
func splitMarkerArgs(s string) ([][2]string, error) {
	var out [][2]string
	for _, part := range splitTop(s, ',') {
		k, v, ok := strings.Cut(part, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%q is not key=value", part)
		}
		out = append(out, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out, nil
}

// splitTop splits s at sep where it is outside quotes and braces.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '{':
			depth++
		case c == '}':
			depth--
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" || len(out) > 0 {
		out = append(out, s[start:])
	}
	return out
}

// markerStrings reads a marker value: "a", a, or {"a","b"}.
func markerStrings(v string) []string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
		var out []string
		for _, e := range splitTop(v[1:len(v)-1], ',') {
			out = append(out, markerString(e))
		}
		return out
	}
	return []string{markerString(v)}
}

func markerString(v string) string {
	v = strings.TrimSpace(v)
	if s, err := strconv.Unquote(v); err == nil {
		return s
	}
	return v
}

// applyKindMarker sets displayName and resources ({{Kind,version,name},...}).
func applyKindMarker(d *operatorsv1alpha1.CRDDescription, args [][2]string) error {
	for _, a := range args {
		switch a[0] {
		case "displayName":
			d.DisplayName = markerString(a[1])
		case "resources":
			v := strings.TrimSpace(a[1])
			if !strings.HasPrefix(v, "{") || !strings.HasSuffix(v, "}") {
				return fmt.Errorf("resources=%s: want {{Kind,version,name},...}", v)
			}
			for _, r := range splitTop(v[1:len(v)-1], ',') {
				f := markerStrings(r)
				if len(f) != 3 || f[0] == "" || f[1] == "" {
					return fmt.Errorf("resources entry %s: want {Kind,version,name}", strings.TrimSpace(r))
				}
				d.Resources = append(d.Resources, operatorsv1alpha1.APIResourceReference{Kind: f[0], Version: f[1], Name: f[2]})
			}
		default:
			return fmt.Errorf("unknown argument %q of a kind marker (displayName, resources)", a[0])
		}
	}
	return nil
}

// addDescriptor adds a spec or status descriptor from a field marker.
func addDescriptor(d *operatorsv1alpha1.CRDDescription, path, doc string, args [][2]string) error {
	var typ, display string
	var xds []string
	for _, a := range args {
		switch a[0] {
		case "type":
			typ = markerString(a[1])
		case "displayName":
			display = markerString(a[1])
		case "xDescriptors":
			xds = append(xds, markerStrings(a[1])...)
		case "order":
		default:
			return fmt.Errorf("unknown argument %q of a field marker (type, displayName, xDescriptors, order)", a[0])
		}
	}
	if path == "" {
		return fmt.Errorf("a marked field needs a JSON name")
	}
	display = firstNonEmpty(display, displayName(path[strings.LastIndex(path, ".")+1:]))
	switch typ {
	case "spec":
		d.SpecDescriptors = append(d.SpecDescriptors, operatorsv1alpha1.SpecDescriptor{Path: path, DisplayName: display, Description: doc, XDescriptors: xds})
	case "status":
		d.StatusDescriptors = append(d.StatusDescriptors, operatorsv1alpha1.StatusDescriptor{Path: path, DisplayName: display, Description: doc, XDescriptors: xds})
	default:
		return fmt.Errorf("type=%q: a field marker needs type=spec or type=status", typ)
	}
	return nil
}
