package packaging

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Placeholders are what a project's release step fills in its manifests:
// envsubst's ${VAR} (with the defaults ${VAR:=d}, ${VAR:-d}, ${VAR=d} and
// ${VAR-d}, as clusterctl takes them) and ko's ko://<import path> images.
// The chart makes them values (placeholders.VAR and images.<name>); the
// bundle, which OLM installs as it is, takes them from --set-env or warns.

// placeholderPattern finds ${VAR} and its default forms.
var placeholderPattern = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[=-])([^}]*))?\}`)

// koPattern finds ko's image references.
var koPattern = regexp.MustCompile(`ko://[A-Za-z0-9._~/-]+`)

// envName is a valid --set-env variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Placeholder is one variable the project's manifests use.
type Placeholder struct {
	// Var is the variable's name; Default its default, from the first use
	// that gives one or from --set-env; Required is true when no use gives
	// one.
	Var      string `json:"var"`
	Default  string `json:"default,omitempty"`
	Required bool   `json:"required,omitempty"`
	// Uses are the placeholder texts as written (${VAR}, ${VAR:=d}).
	Uses []string `json:"uses"`
}

// KoImage is an image the project's release builds with ko.
type KoImage struct {
	// Name is its key under the chart's images value; Ref the ko:// text.
	Name string `json:"name"`
	Ref  string `json:"ref"`
}

// ParseSetEnv reads --set-env VAR=value flags.
func ParseSetEnv(flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range flags {
		name, val, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("--set-env %q: want VAR=value", f)
		}
		if !envName.MatchString(name) {
			return nil, fmt.Errorf("--set-env %q: %q is not a variable name (letters, digits and _, not starting with a digit)", f, name)
		}
		out[name] = val
	}
	return out, nil
}

// placeholderSources are the objects whose placeholders the chart and
// bundle fill: everything but the CRDs, whose descriptions may show ${…}
// as text.
func (p *Project) placeholderSources() []*unstructured.Unstructured {
	out := []*unstructured.Unstructured{p.managerRaw}
	for _, o := range slices.Concat(p.Objects, p.Optional, p.Webhooks, p.CertManager) {
		if o.GetKind() != "CustomResourceDefinition" {
			out = append(out, o)
		}
	}
	return out
}

// scanPlaceholders finds the project's placeholders and ko images, sorted.
func (p *Project) scanPlaceholders() ([]Placeholder, []KoImage) {
	byVar := map[string]*Placeholder{}
	var kos []string
	for _, o := range p.placeholderSources() {
		placeholderStrings(o.Object, func(s string) string {
			for _, m := range placeholderPattern.FindAllStringSubmatch(s, -1) {
				ph := byVar[m[1]]
				if ph == nil {
					ph = &Placeholder{Var: m[1], Required: true}
					byVar[m[1]] = ph
				}
				if !slices.Contains(ph.Uses, m[0]) {
					ph.Uses = append(ph.Uses, m[0])
				}
				if m[2] != "" && ph.Required {
					ph.Default, ph.Required = placeholderDefault(m[3]), false
				}
			}
			for _, k := range koPattern.FindAllString(s, -1) {
				if !slices.Contains(kos, k) {
					kos = append(kos, k)
				}
			}
			return s
		})
		// A placeholder line is nothing while its variable is unset.
		for _, l := range substLines(o.Object) {
			ph := byVar[l.Var]
			if ph == nil {
				ph = &Placeholder{Var: l.Var}
				byVar[l.Var] = ph
			}
			if !slices.Contains(ph.Uses, l.Text) {
				ph.Uses = append(ph.Uses, l.Text)
			}
			if ph.Required {
				ph.Default, ph.Required = "", false
			}
		}
	}
	var phs []Placeholder
	for _, v := range sortedKeys(byVar) {
		ph := *byVar[v]
		if val, ok := p.setEnv[v]; ok {
			ph.Default, ph.Required = val, false
		}
		slices.Sort(ph.Uses)
		phs = append(phs, ph)
	}
	slices.Sort(kos)
	var imgs []RelatedImage
	for _, k := range kos {
		path := strings.TrimSuffix(strings.TrimPrefix(k, "ko://"), "/")
		imgs = append(imgs, RelatedImage{Name: imageName(path[strings.LastIndex(path, "/")+1:]), Image: k})
	}
	var out []KoImage
	for _, img := range dedupeNames(imgs) {
		out = append(out, KoImage{Name: img.Name, Ref: img.Image})
	}
	return phs, out
}

// placeholderStrings replaces every string of v that may hold a
// placeholder with f of it, writing to v only where f changes one (the
// chart and the bundle scan the same objects side by side). Scripts and documents are not: a string of
// several lines (a Grafana dashboard's ${datasource}, a config file) or
// one after "-c" in a list (sh -c '…${HOME}…') is the program's own.
func placeholderStrings(v any, f func(string) string) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok {
				if strings.Contains(s, "\n") {
					continue
				}
				if r := f(s); r != s {
					t[k] = r
				}
				continue
			}
			placeholderStrings(e, f)
		}
	case []any:
		for i, e := range t {
			if s, ok := e.(string); ok {
				if !strings.Contains(s, "\n") && (i == 0 || t[i-1] != "-c") {
					if r := f(s); r != s {
						t[i] = r
					}
				}
				continue
			}
			placeholderStrings(e, f)
		}
	}
}

// PlaceholdersIn lists the placeholders and ko images in obj, as
// opctl package finds them, in order of appearance; a caller skips the
// CRDs.
func PlaceholdersIn(obj map[string]any) []string {
	var out []string
	eachPlaceholderKey(obj, func(_ map[string]any, key string) { out = append(out, key) })
	placeholderStrings(obj, func(s string) string {
		for _, m := range slices.Concat(placeholderPattern.FindAllString(s, -1), koPattern.FindAllString(s, -1)) {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
		return s
	})
	return out
}

// placeholderDefault is the value a placeholder's default stands for: a
// default written as a YAML quoted string (${VAR:=""}, ${VAR:='x'}) is
// its content, which is what the YAML reading after the release step's
// substitution gives where the placeholder is the whole value.
func placeholderDefault(d string) string {
	if len(d) >= 2 && (d[0] == '"' || d[0] == '\'') && d[len(d)-1] == d[0] {
		var s string
		if err := yaml.Unmarshal([]byte(d), &s); err == nil {
			return s
		}
	}
	return d
}

// hasPlaceholder reports a string the chart fills from values.
func hasPlaceholder(s string) bool {
	return placeholderPattern.MatchString(s) || koPattern.MatchString(s)
}

// substitute fills the placeholders of the variables in known in s from
// env, the way envsubst does; left lists those it could not fill (unset,
// without a default).
func substitute(s string, known map[string]bool, env map[string]string) (string, []string) {
	var left []string
	out := placeholderPattern.ReplaceAllStringFunc(s, func(m string) string {
		g := placeholderPattern.FindStringSubmatch(m)
		val, set := env[g[1]]
		switch {
		case !known[g[1]]:
			return m
		case (g[2] == ":=" || g[2] == ":-") && val == "":
			return placeholderDefault(g[3])
		case (g[2] == "=" || g[2] == "-") && !set:
			return placeholderDefault(g[3])
		case set:
			return val
		}
		left = append(left, g[1])
		return m
	})
	return out, left
}

// fillBundle fills the placeholders in the bundle's manifests, all but
// the CRDs, from --set-env and their defaults, and warns of those left
// and of ko images.
func (p *Project) fillBundle(files Files, dir string) ([]string, error) {
	phs, koImages := p.scanPlaceholders()
	if len(phs)+len(koImages) == 0 {
		return nil, nil // nothing to fill, nothing to warn of
	}
	known := map[string]bool{}
	for _, ph := range phs {
		known[ph.Var] = true
	}
	var left, kos []string
	for _, path := range files.sortedPaths() {
		if !strings.HasPrefix(path, dir+"manifests/") || !strings.HasSuffix(path, ".yaml") {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal(files[path], &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if obj["kind"] == "CustomResourceDefinition" {
			continue
		}
		changed, err := expandSubstLines(obj, p.setEnv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		placeholderStrings(obj, func(s string) string {
			for _, k := range koPattern.FindAllString(s, -1) {
				if !slices.Contains(kos, k) {
					kos = append(kos, k)
				}
			}
			out, l := substitute(s, known, p.setEnv)
			for _, v := range l {
				if !slices.Contains(left, v) {
					left = append(left, v)
				}
			}
			changed = changed || out != s
			return out
		})
		if changed {
			if err := put(files, path, obj); err != nil {
				return nil, err
			}
		}
	}
	slices.Sort(left)
	slices.Sort(kos)
	return placeholderWarnings(left, kos), nil
}

// placeholderHelper is the chart's "<chart>.placeholders" helper: called
// with (list $ s), it returns s with each placeholder filled from
// .Values.placeholders and each ko image from .Values.images, and fails
// naming the value when a required one is unset.
func placeholderHelper(chart string, phs []Placeholder, kos []KoImage) string {
	var b strings.Builder
	b.WriteString("\n{{/* Fills the placeholders the project's release step filled (${VAR}, ko://) in a string, from .Values.placeholders and .Values.images. */}}\n")
	fmt.Fprintf(&b, "{{- define %q -}}\n", chart+".placeholders")
	fillLines(&b, "index . 1 | toString", phs, kos, false)
	b.WriteString("{{- $s -}}\n{{- end }}\n")
	return b.String()
}

// fillLines writes the template lines that set $s to the text s and
// replace in it each placeholder use and ko image with its value from
// (index . 0).Values. In JSON text (inJSON) they are found and replaced as
// the content of JSON strings.
func fillLines(b *strings.Builder, s string, phs []Placeholder, kos []KoImage, inJSON bool) {
	b.WriteString("{{- $v := (index . 0).Values.placeholders | default (dict) -}}\n")
	b.WriteString("{{- $i := (index . 0).Values.images | default (dict) -}}\n")
	fmt.Fprintf(b, "{{- $s := %s -}}\n", s)
	fill := func(text, val string) {
		val += " | toString"
		if inJSON {
			text = jsonContent(text)
			val += ` | toJson | trimPrefix "\"" | trimSuffix "\""`
		}
		fmt.Fprintf(b, "{{- if contains %s $s }}{{ $s = replace %s (%s) $s }}{{ end -}}\n", strconv.Quote(text), strconv.Quote(text), val)
	}
	for _, ph := range phs {
		for _, use := range ph.Uses {
			g := placeholderPattern.FindStringSubmatch(use)
			if g == nil || g[0] != use {
				continue // a placeholder line, which the template renders itself
			}
			val := fmt.Sprintf("(index $v %q)", ph.Var)
			switch g[2] {
			case "=", "-": // the default only when unset
				val = fmt.Sprintf("(ternary %s %s (hasKey $v %q))", val, strconv.Quote(placeholderDefault(g[3])), ph.Var)
			case ":=", ":-":
				val = fmt.Sprintf("(default %s %s)", strconv.Quote(placeholderDefault(g[3])), val)
			case "":
				msg := fmt.Sprintf("placeholders.%s is required: the project's manifests use %s, which its release step fills; set it with --set-string placeholders.%s=...", ph.Var, use, ph.Var)
				val = fmt.Sprintf("(required %s %s)", strconv.Quote(msg), val)
			}
			fill(use, val)
		}
	}
	for _, k := range kos {
		msg := fmt.Sprintf("images.%s is required: the project's manifests name %s, an image its release builds with ko; set it with --set-string images.%s=<image>", k.Name, k.Ref, k.Name)
		fill(k.Ref, fmt.Sprintf("(required %s (index $i %q))", strconv.Quote(msg), k.Name))
	}
}

// placeholderValues are the placeholders.* and images.* values.
func placeholderValues(phs []Placeholder, kos []KoImage) []value {
	var vs []value
	if len(phs) > 0 {
		var kids []value
		for _, ph := range phs {
			doc := "Fills " + strings.Join(ph.Uses, ", ") + " in the project's manifests"
			if ph.Required {
				doc += "; required."
			} else {
				doc += "."
			}
			kids = append(kids, value{Key: ph.Var, Doc: doc, Val: ph.Default, Required: ph.Required})
		}
		vs = append(vs, value{Key: "placeholders", Doc: "Variables the project's release step substitutes in its manifests (envsubst, clusterctl).", Kids: kids})
	}
	if len(kos) > 0 {
		var kids []value
		for _, k := range kos {
			kids = append(kids, value{Key: k.Name, Doc: "The image built by ko from " + strings.TrimPrefix(k.Ref, "ko://") + " (" + k.Ref + " in the project's manifests); required.", Val: "", Required: true})
		}
		vs = append(vs, value{Key: "images", Doc: "Images the project's release builds with ko.", Kids: kids})
	}
	return vs
}

// placeholderWarnings name what is left in bundle text for OLM, which
// substitutes nothing.
func placeholderWarnings(left, kos []string) []string {
	var out []string
	if len(left) > 0 {
		out = append(out, fmt.Sprintf("the bundle keeps the placeholders %s, which the project's release step fills and OLM does not: pass --set-env VAR=value for each", strings.Join(left, ", ")))
	}
	if len(kos) > 0 {
		out = append(out, fmt.Sprintf("the bundle names %s, images the project's release builds with ko, which no cluster can pull: build them and pass the manager's with --image", strings.Join(kos, ", ")))
	}
	return out
}

// placeholderReadme adds the chart README's Placeholders section: each
// placeholder, its value and its default or "required".
func placeholderReadme(b *bytes.Buffer, p *Project) {
	phs, kos := p.scanPlaceholders()
	if len(phs)+len(kos) == 0 {
		return
	}
	b.WriteString("\n## Placeholders\n\nThe project's manifests carry placeholders its release step fills (envsubst, clusterctl, ko). The chart fills them from values; the CRDs are left as they are.\n\n| Placeholder | Value | Default |\n|---|---|---|\n")
	var set []string
	for _, ph := range phs {
		def := "`" + ph.Default + "`"
		if ph.Required {
			def = "required"
			set = append(set, "placeholders."+ph.Var+"=...")
		}
		fmt.Fprintf(b, "| `%s` | `placeholders.%s` | %s |\n", strings.Join(ph.Uses, "`, `"), ph.Var, def)
	}
	for _, k := range kos {
		fmt.Fprintf(b, "| `%s` | `images.%s` | required |\n", k.Ref, k.Name)
		set = append(set, "images."+k.Name+"=<image>")
	}
	if len(set) > 0 {
		fmt.Fprintf(b, "\nInstall with the required ones set (strings, as the schema wants): `--set-string %s`.\n", strings.Join(set, ","))
	}
}
