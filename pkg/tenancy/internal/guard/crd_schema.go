package guard

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// schemaDiff is what replacing one version's schema (old) with another
// (new) does to the objects stored under the old one, judged the way the
// API server prunes and validates them (pkg/apiserver/schema/pruning):
//
//   - removed: declared fields the new schema prunes;
//   - narrowed: values the old schema kept or accepted and the new one
//     prunes or refuses: x-kubernetes-preserve-unknown-fields or
//     additionalProperties dropped, a type narrowed, nullable dropped, an
//     enum added or shrunk, a field newly required, tighter bounds, a
//     pattern or format added or changed, a default stored objects would
//     read (added or changed on a field, anywhere in a subtree kept whole
//     before and declared now, on a new field). Tighter bounds are refused
//     outright, whatever the stored objects hold: the comparison stays
//     pure, and the OLM path relies on it alone;
//   - checks: new validation only the stored objects can judge (rules,
//     allOf/anyOf/oneOf/not, list types, a field the old schema kept whole
//     under x-kubernetes-preserve-unknown-fields now declared).
//     StoredObjectsFit runs them.
//
// Paths are JSON paths from the object's root: .spec.config, items as
// [*], map values as .*; the root itself is ".".
type schemaDiff struct {
	removed  []string
	narrowed []pathNote
	checks   []pathNote
}

// pathNote is one change at a path.
type pathNote struct{ path, what string }

func (n pathNote) String() string { return rootPath(n.path) + ": " + n.what }

func rootPath(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// refused reports whether the diff alone refuses the change.
func (d schemaDiff) refused() bool { return len(d.removed) > 0 || len(d.narrowed) > 0 }

// diffSchema compares old and new, the openAPIV3Schema of a version. A
// nil schema on either side compares nothing.
func diffSchema(old, new *apiextensionsv1.JSONSchemaProps) schemaDiff {
	var d schemaDiff
	if old != nil && new != nil {
		d.walk("", old, new, true)
	}
	sort.Strings(d.removed)
	return d
}

// walk compares the schemas of the value at path p. A nil schema is a
// value kept whole and unvalidated: a field not declared under
// x-kubernetes-preserve-unknown-fields. embedded is true at the object's
// root and in embedded resources, whose apiVersion, kind and metadata the
// API server keeps whatever the schema declares.
func (d *schemaDiff) walk(p string, old, new *apiextensionsv1.JSONSchemaProps, embedded bool) {
	switch {
	case new == nil:
		return // kept whole now: nothing pruned, nothing refused
	case old == nil:
		d.declaredDefaults(p, new)
		if !keepsWhole(new) {
			d.checks = append(d.checks, pathNote{p, "kept whole under x-kubernetes-preserve-unknown-fields before, declared now"})
		}
		return
	}
	d.types(p, old, new)
	if preserves(old) && !preserves(new) {
		d.narrowed = append(d.narrowed, pathNote{p, "x-kubernetes-preserve-unknown-fields removed (the fields it kept would be pruned)"})
	}
	if old.XEmbeddedResource != new.XEmbeddedResource {
		d.narrowed = append(d.narrowed, pathNote{p, "x-kubernetes-embedded-resource changed"})
	}
	d.properties(p, old, new, embedded || old.XEmbeddedResource)
	d.mapValues(p, old, new)
	d.items(p, old, new)
	d.required(p, old, new)
	d.enum(p, old, new)
	d.defaults(p, old, new)
	d.bounds(p, old, new)
	d.validations(p, old, new)
}

// JSON types a schema accepts, as bits.
const (
	acceptsObject = 1 << iota
	acceptsArray
	acceptsString
	acceptsInteger
	acceptsNumber
	acceptsBoolean
	acceptsAny = acceptsObject | acceptsArray | acceptsString | acceptsInteger | acceptsNumber | acceptsBoolean
)

// accepts is the set of JSON types s admits, null aside.
func accepts(s *apiextensionsv1.JSONSchemaProps) int {
	if s.XIntOrString {
		return acceptsInteger | acceptsString
	}
	switch s.Type {
	case "":
		return acceptsAny
	case "object":
		return acceptsObject
	case "array":
		return acceptsArray
	case "string":
		return acceptsString
	case "integer":
		return acceptsInteger
	case "number":
		return acceptsInteger | acceptsNumber
	case "boolean":
		return acceptsBoolean
	}
	return 0
}

func typeName(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "int-or-string"
	case s.Type == "":
		return "any type"
	}
	return s.Type
}

func (d *schemaDiff) types(p string, old, new *apiextensionsv1.JSONSchemaProps) {
	o, n := accepts(old), accepts(new)
	switch {
	case o&^n == 0:
	case n&^o == 0:
		d.narrowed = append(d.narrowed, pathNote{p, fmt.Sprintf("type narrowed from %s to %s", typeName(old), typeName(new))})
	default:
		d.narrowed = append(d.narrowed, pathNote{p, fmt.Sprintf("type changed from %s to %s", typeName(old), typeName(new))})
	}
	if old.Nullable && !new.Nullable {
		d.narrowed = append(d.narrowed, pathNote{p, "nullable removed"})
	}
}

func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// keepsWhole reports whether s keeps any value whole and unchecked, as
// no schema under x-kubernetes-preserve-unknown-fields does.
func keepsWhole(s *apiextensionsv1.JSONSchemaProps) bool {
	return preserves(s) && s.Type == "" && !s.XIntOrString && !s.XEmbeddedResource && len(s.Properties) == 0 &&
		mapSchema(s) == nil && itemSchema(s) == nil && len(s.Required) == 0 && len(s.Enum) == 0 &&
		len(s.XValidations) == 0 && !hasJunctors(s) && !hasBounds(s)
}

// mapSchema is the schema of s's map values, nil if s has none. An
// additionalProperties without a schema keeps scalars and prunes what
// nests under them, as an empty schema does.
func mapSchema(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	switch a := s.AdditionalProperties; {
	case a == nil:
		return nil
	case a.Schema != nil:
		return a.Schema
	case a.Allows:
		return &apiextensionsv1.JSONSchemaProps{}
	}
	return nil
}

func itemSchema(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	if s.Items == nil {
		return nil
	}
	return s.Items.Schema
}

// metaFields are kept at a resource's root whatever its schema says.
var metaFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// fieldPath appends key k to p, bracketed when it is no plain name.
func fieldPath(p, k string) string {
	if k != "" && strings.IndexFunc(k, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return p + "." + k
	}
	return p + "[" + fmt.Sprintf("%q", k) + "]"
}

func (d *schemaDiff) properties(p string, old, new *apiextensionsv1.JSONSchemaProps, embedded bool) {
	for _, k := range sortedKeys(old.Properties) {
		if embedded && metaFields[k] {
			continue
		}
		o := old.Properties[k]
		kp := fieldPath(p, k)
		if n, ok := new.Properties[k]; ok {
			d.walk(kp, &o, &n, false)
		} else if m := mapSchema(new); m != nil {
			d.walk(kp, &o, m, false)
		} else if !preserves(new) {
			d.removed = append(d.removed, kp)
		}
	}
	for _, k := range sortedKeys(new.Properties) {
		if _, ok := old.Properties[k]; ok || embedded && metaFields[k] {
			continue
		}
		n := new.Properties[k]
		kp := fieldPath(p, k)
		switch m := mapSchema(old); {
		case m != nil:
			d.walk(kp, m, &n, false)
		case preserves(old):
			d.walk(kp, nil, &n, false)
		case n.Default != nil:
			// A new field: absent from stored objects (the API server
			// pruned it), and read with its default by every one of them:
			// a tenant's definition would write into the others' objects.
			// Defaults deeper in it apply only under a value of it, which
			// no stored object holds.
			d.narrowed = append(d.narrowed, pathNote{kp, "new field with default " + canonicalJSON(n.Default.Raw) + " (every stored object would read it)"})
		}
	}
}

func (d *schemaDiff) mapValues(p string, old, new *apiextensionsv1.JSONSchemaProps) {
	o, n := mapSchema(old), mapSchema(new)
	switch {
	case o != nil && n != nil:
		d.walk(p+".*", o, n, false)
	case o != nil && !preserves(new):
		d.narrowed = append(d.narrowed, pathNote{p, "additionalProperties removed (the keys it kept would be pruned)"})
	case o == nil && n != nil && preserves(old):
		d.walk(p+".*", nil, n, false)
	}
}

func (d *schemaDiff) items(p string, old, new *apiextensionsv1.JSONSchemaProps) {
	o, n := itemSchema(old), itemSchema(new)
	switch {
	case o != nil && n != nil:
		d.walk(p+"[*]", o, n, false)
	case o != nil && !preserves(new) && accepts(new)&acceptsArray != 0:
		d.narrowed = append(d.narrowed, pathNote{p, "items no longer declared (stored items would be pruned)"})
	case o == nil && n != nil && preserves(old):
		d.walk(p+"[*]", nil, n, false)
	}
}

func (d *schemaDiff) required(p string, old, new *apiextensionsv1.JSONSchemaProps) {
	for _, r := range new.Required {
		if !slices.Contains(old.Required, r) {
			what := "newly required"
			if _, ok := old.Properties[r]; !ok {
				what = "new required field"
			}
			d.narrowed = append(d.narrowed, pathNote{fieldPath(p, r), what})
		}
	}
}

// declaredDefaults refuses the defaults of s, a subtree kept whole under
// x-kubernetes-preserve-unknown-fields before and declared now: a stored
// object that holds the subtree but leaves such a field unset would read
// the default, where it read nothing before.
func (d *schemaDiff) declaredDefaults(p string, s *apiextensionsv1.JSONSchemaProps) {
	if s.Default != nil {
		d.narrowed = append(d.narrowed, pathNote{p, "default " + canonicalJSON(s.Default.Raw) + " added under x-kubernetes-preserve-unknown-fields (objects that leave it unset would read it)"})
	}
	for _, k := range sortedKeys(s.Properties) {
		n := s.Properties[k]
		d.declaredDefaults(fieldPath(p, k), &n)
	}
	if m := mapSchema(s); m != nil {
		d.declaredDefaults(p+".*", m)
	}
	if i := itemSchema(s); i != nil {
		d.declaredDefaults(p+"[*]", i)
	}
}

// defaults refuses a default added to or changed on an existing field:
// the API server defaults on read, so every stored object that leaves the
// field unset would read otherwise (a deletion policy defaulted to Delete).
func (d *schemaDiff) defaults(p string, old, new *apiextensionsv1.JSONSchemaProps) {
	switch {
	case new.Default == nil:
	case old.Default == nil:
		d.narrowed = append(d.narrowed, pathNote{p, "default " + canonicalJSON(new.Default.Raw) + " added (objects that leave it unset would read it)"})
	case canonicalJSON(old.Default.Raw) != canonicalJSON(new.Default.Raw):
		d.narrowed = append(d.narrowed, pathNote{p, "default changed from " + canonicalJSON(old.Default.Raw) + " to " + canonicalJSON(new.Default.Raw)})
	}
}

func (d *schemaDiff) enum(p string, old, new *apiextensionsv1.JSONSchemaProps) {
	if len(new.Enum) == 0 {
		return
	}
	if len(old.Enum) == 0 {
		d.narrowed = append(d.narrowed, pathNote{p, "enum added"})
		return
	}
	have := map[string]bool{}
	for _, v := range new.Enum {
		have[canonicalJSON(v.Raw)] = true
	}
	for _, v := range old.Enum {
		if c := canonicalJSON(v.Raw); !have[c] {
			d.narrowed = append(d.narrowed, pathNote{p, "enum value " + c + " removed"})
		}
	}
}

// canonicalJSON is raw re-encoded, so that equal values compare equal.
func canonicalJSON(raw []byte) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(b)
}

// widerFormats are format changes that admit more values.
var widerFormats = map[[2]string]bool{{"int32", "int64"}: true, {"float", "double"}: true}

func (d *schemaDiff) bounds(p string, old, new *apiextensionsv1.JSONSchemaProps) {
	add := func(what string) { d.narrowed = append(d.narrowed, pathNote{p, what}) }
	if n := new.Maximum; n != nil {
		switch o := old.Maximum; {
		case o == nil:
			add(fmt.Sprintf("maximum %g added", *n))
		case *n < *o:
			add(fmt.Sprintf("maximum lowered from %g to %g", *o, *n))
		case *n == *o && new.ExclusiveMaximum && !old.ExclusiveMaximum:
			add(fmt.Sprintf("maximum %g made exclusive", *n))
		}
	}
	if n := new.Minimum; n != nil {
		switch o := old.Minimum; {
		case o == nil:
			add(fmt.Sprintf("minimum %g added", *n))
		case *n > *o:
			add(fmt.Sprintf("minimum raised from %g to %g", *o, *n))
		case *n == *o && new.ExclusiveMinimum && !old.ExclusiveMinimum:
			add(fmt.Sprintf("minimum %g made exclusive", *n))
		}
	}
	for _, b := range []struct {
		name     string
		old, new *int64
		max      bool
	}{
		{"maxLength", old.MaxLength, new.MaxLength, true},
		{"maxItems", old.MaxItems, new.MaxItems, true},
		{"maxProperties", old.MaxProperties, new.MaxProperties, true},
		{"minLength", old.MinLength, new.MinLength, false},
		{"minItems", old.MinItems, new.MinItems, false},
		{"minProperties", old.MinProperties, new.MinProperties, false},
	} {
		switch {
		case b.new == nil || !b.max && *b.new <= 0:
		case b.old == nil:
			add(fmt.Sprintf("%s %d added", b.name, *b.new))
		case b.max && *b.new < *b.old:
			add(fmt.Sprintf("%s lowered from %d to %d", b.name, *b.old, *b.new))
		case !b.max && *b.new > *b.old:
			add(fmt.Sprintf("%s raised from %d to %d", b.name, *b.old, *b.new))
		}
	}
	if new.Pattern != "" && new.Pattern != old.Pattern {
		if old.Pattern == "" {
			add(fmt.Sprintf("pattern %q added", new.Pattern))
		} else {
			add(fmt.Sprintf("pattern changed from %q to %q", old.Pattern, new.Pattern))
		}
	}
	// The API server checks formats of strings only.
	if new.Format != "" && new.Format != old.Format && accepts(new)&acceptsString != 0 && !widerFormats[[2]string{old.Format, new.Format}] {
		if old.Format == "" {
			add(fmt.Sprintf("format %q added", new.Format))
		} else {
			add(fmt.Sprintf("format changed from %q to %q", old.Format, new.Format))
		}
	}
	if n := new.MultipleOf; n != nil {
		// Every multiple of the old factor stays one of the new.
		switch o := old.MultipleOf; {
		case o == nil:
			add(fmt.Sprintf("multipleOf %g added", *n))
		case *o != *n && (*n == 0 || math.Mod(*o, *n) != 0):
			add(fmt.Sprintf("multipleOf changed from %g to %g", *o, *n))
		}
	}
	if new.UniqueItems && !old.UniqueItems {
		add("uniqueItems added")
	}
}

func hasBounds(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.Maximum != nil || s.Minimum != nil || s.MaxLength != nil || s.MinLength != nil || s.MaxItems != nil ||
		s.MinItems != nil || s.MaxProperties != nil || s.MinProperties != nil || s.Pattern != "" || s.Format != "" ||
		s.MultipleOf != nil || s.UniqueItems
}

func hasJunctors(s *apiextensionsv1.JSONSchemaProps) bool {
	return len(s.AllOf) > 0 || len(anyOf(s)) > 0 || len(s.OneOf) > 0 || s.Not != nil
}

// anyOf is s.AnyOf but for the integer-or-string pattern of
// x-kubernetes-int-or-string, which declares the type and validates
// nothing more.
func anyOf(s *apiextensionsv1.JSONSchemaProps) []apiextensionsv1.JSONSchemaProps {
	if s.XIntOrString && len(s.AnyOf) == 2 && slices.ContainsFunc(s.AnyOf, isType("integer")) && slices.ContainsFunc(s.AnyOf, isType("string")) {
		return nil
	}
	return s.AnyOf
}

// isType matches a schema that says its type t and nothing else.
func isType(t string) func(apiextensionsv1.JSONSchemaProps) bool {
	return func(s apiextensionsv1.JSONSchemaProps) bool {
		return s.Type == t && equality.Semantic.DeepEqual(s, apiextensionsv1.JSONSchemaProps{Type: t})
	}
}

// validations notes the checks only stored objects can judge: rules
// added or changed, junctors changed, a list made a set or a map.
func (d *schemaDiff) validations(p string, old, new *apiextensionsv1.JSONSchemaProps) {
	for _, r := range new.XValidations {
		if !slices.ContainsFunc(old.XValidations, func(o apiextensionsv1.ValidationRule) bool {
			return o.Rule == r.Rule && (o.OptionalOldSelf != nil && *o.OptionalOldSelf) == (r.OptionalOldSelf != nil && *r.OptionalOldSelf)
		}) {
			d.checks = append(d.checks, pathNote{p, fmt.Sprintf("validation rule %q added", r.Rule)})
		}
	}
	if hasJunctors(new) && junctors(old) != junctors(new) {
		d.checks = append(d.checks, pathNote{p, "allOf/anyOf/oneOf/not changed"})
	}
	o, n := listType(old), listType(new)
	if n != o && n != "atomic" {
		d.checks = append(d.checks, pathNote{p, fmt.Sprintf("x-kubernetes-list-type changed from %s to %s", o, n)})
	} else if n == "map" && !slices.Equal(old.XListMapKeys, new.XListMapKeys) {
		d.checks = append(d.checks, pathNote{p, "x-kubernetes-list-map-keys changed"})
	}
}

func junctors(s *apiextensionsv1.JSONSchemaProps) string {
	b, _ := json.Marshal([]any{s.AllOf, anyOf(s), s.OneOf, s.Not})
	return string(b)
}

func listType(s *apiextensionsv1.JSONSchemaProps) string {
	if s.XListType == nil || *s.XListType == "" {
		return "atomic"
	}
	return *s.XListType
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
