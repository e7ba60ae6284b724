package packaging

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// templater turns objects into Helm templates. It puts tokens into the
// object where template expressions go, marshals it to YAML (sorted keys,
// so output is deterministic) and swaps the tokens for the expressions.
type templater struct {
	chart     string            // chart name, for the helpers' include names
	prefix    string            // overlay namePrefix to strip
	namespace string            // overlay namespace, replaced by the release's
	renames   map[string]string // overlay name → template expression
	tokens    map[string]string // token → replacement
	lines     map[string]func(indent int) string
	n         int
	// podName is the manager pods' own app.kubernetes.io/name, which the
	// chart keeps in their labels and selectors; "" when they have none.
	podName string
	// imageKeys maps an image to its .Values.relatedImages key.
	imageKeys map[string]string
	// fills is true when the project has placeholders (${VAR}, ko://):
	// strings holding them render through the chart's placeholders helper.
	fills bool
	// placeheld are the values whose defaults hold placeholders, by values
	// path (placeheldValues); filledValues is set when a template renders
	// one through the chart's filledValue helper.
	placeheld    map[string][]string
	filledValues bool
}

func newTemplater(chart, prefix, namespace string) *templater {
	return &templater{chart: chart, prefix: prefix, namespace: namespace, renames: map[string]string{}, tokens: map[string]string{}, lines: map[string]func(int) string{}}
}

// token returns a placeholder that becomes expr in the output.
func (t *templater) token(expr string) string {
	t.n++
	tok := fmt.Sprintf("OPCTLTOKEN%dX", t.n)
	t.tokens[tok] = expr
	return tok
}

// include renders a call of one of the chart's helpers.
func (t *templater) include(helper string) string {
	return fmt.Sprintf(`{{ include "%s.%s" . }}`, t.chart, helper)
}

// nameFor is the release-specific name of an overlay object. Cluster-scoped
// objects carry the namespace too, so releases in two namespaces coexist.
func (t *templater) nameFor(name string, clusterScoped bool) string {
	return t.nameOf("", name, clusterScoped)
}

// maxNameLength is the longest name of kinds whose controllers derive
// longer names from it: a CronJob's Jobs add 11 characters, a
// StatefulSet's revision label 11.
var maxNameLength = map[string]int{"CronJob": 52, "StatefulSet": 52}

// nameOf is nameFor within the name limit of kind.
func (t *templater) nameOf(kind, name string, clusterScoped bool) string {
	return "{{ " + t.nameExpr(kind, name, clusterScoped) + " }}"
}

// nameExpr is the template expression of nameOf, for use inside another
// action.
func (t *templater) nameExpr(kind, name string, clusterScoped bool) string {
	suffix := `"` + strings.TrimPrefix(name, t.prefix) + `"`
	if clusterScoped {
		suffix = `(printf "%s-` + strings.TrimPrefix(name, t.prefix) + `" .Release.Namespace)`
	}
	if max, ok := maxNameLength[kind]; ok {
		suffix += " " + strconv.Itoa(max)
	}
	return fmt.Sprintf(`include "%s.child" (list . %s)`, t.chart, suffix)
}

// block marks a field whose content is the YAML of a values path.
func (t *templater) block(valuesPath string) string {
	t.n++
	tok := fmt.Sprintf("OPCTLBLOCK%dX", t.n)
	t.tokens[tok] = t.yamlOf(valuesPath, valuesPath)
	return tok
}

// line marks a map key whose line becomes the template lines of expand,
// called with the line's indentation.
func (t *templater) line(expand func(indent int) string) string {
	t.n++
	tok := fmt.Sprintf("OPCTLLINE%dX", t.n)
	t.lines[tok] = expand
	return tok
}

// escapeActions keeps template delimiters that are data (alert templates
// in a PrometheusRule, legend formats in a dashboard) from being read as
// Helm template actions: they render back to themselves.
var escapeActions = strings.NewReplacer("{{", "{{`{{`}}", "}}", "{{`}}`}}")

// finish marshals obj and replaces its tokens.
func (t *templater) finish(obj map[string]any) (string, error) {
	if t.fills && obj["kind"] != "CustomResourceDefinition" {
		t.renderSubstLines(obj)
		t.fillPlaceholders(obj)
	}
	b, err := yaml.Marshal(obj)
	if err != nil {
		return "", err
	}
	s := escapeActions.Replace(string(b))
	s = replaceMarks(s, "OPCTLBLOCK", func(line, tok string) (string, bool) {
		indent, dash, key, ok := markLine(line, tok, func(rest string) (string, bool) {
			return strings.CutSuffix(rest, ": "+tok)
		})
		if !ok || !isKey(key) {
			return "", false
		}
		inner := len(indent) + len(dash) + 2
		return fmt.Sprintf("%s%s%s:\n%s{{- %s | nindent %d }}", indent, dash, key, strings.Repeat(" ", inner), t.tokens[tok], inner), true
	})
	s = replaceMarks(s, "OPCTLLINE", func(line, tok string) (string, bool) {
		indent, _, _, ok := markLine(line, tok, func(rest string) (string, bool) {
			return "", rest == tok+`: ""`
		})
		if !ok {
			return "", false
		}
		return t.lines[tok](len(indent)), true
	})
	s = replaceTokens(s, "OPCTLTOKEN", func(tok string) string { return t.tokens[tok] })
	return s, nil
}

// helmLabelKeys are set by the chart's labels helper; the overlay's values
// for them are dropped to avoid duplicate keys.
var helmLabelKeys = []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/managed-by", "helm.sh/chart"}

// nameLabel is the label the chart's selector labels set from the chart
// name, unless the project sets its own.
const nameLabel = "app.kubernetes.io/name"

// labels replaces metadata.labels of m with the overlay's own labels plus
// the chart's standard labels. An app.kubernetes.io/name the project sets
// is kept, since its selectors may use it.
func (t *templater) labels(meta map[string]any) {
	labels, _ := meta["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	helper := "labels"
	if _, own := labels[nameLabel]; own {
		helper = "commonLabels"
	}
	for _, k := range helmLabelKeys {
		if k != nameLabel || helper == "labels" {
			delete(labels, k)
		}
	}
	labels[t.line(func(indent int) string {
		return fmt.Sprintf(`%s{{- include "%s.%s" . | nindent %d }}`, strings.Repeat(" ", indent), t.chart, helper, indent)
	})] = ""
	meta["labels"] = labels
}

// selector makes m, labels or a selector of the manager pods, select this
// release's pods: the chart's selector labels, or the project's own name
// label and the release instance.
func (t *templater) selector(m map[string]any) {
	for _, k := range helmLabelKeys {
		delete(m, k)
	}
	if t.podName != "" {
		m[nameLabel] = t.podName
		m["app.kubernetes.io/instance"] = t.token("{{ .Release.Name }}")
		return
	}
	m[t.line(func(indent int) string {
		return fmt.Sprintf(`%s{{- include "%s.selectorLabels" . | nindent %d }}`, strings.Repeat(" ", indent), t.chart, indent)
	})] = ""
}

// referenceKeys are fields that name other objects of the overlay.
var referenceKeys = []string{"name", "serviceAccountName", "secretName", "claimName", "policyName", "serviceName", "priorityClassName"}

// localNames mark maps whose name is local to the pod (a container, a port,
// a volume and its mounts), not a reference to another object, however it
// is spelled: moco's container is named like its Deployment.
var localNames = []string{"image", "containerPort", "mountPath", "secret", "configMap", "emptyDir", "persistentVolumeClaim",
	"projected", "hostPath", "csi", "downwardAPI", "ephemeral"}

func localNamed(m map[string]any) bool {
	for _, k := range localNames {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// rewriteRefs replaces names of overlay objects and the overlay namespace
// wherever v refers to them.
func (t *templater) rewriteRefs(v any) {
	switch m := v.(type) {
	case map[string]any:
		local := localNamed(m)
		for k, e := range m {
			if s, ok := e.(string); ok {
				if expr, ok := t.renames[s]; ok && slices.Contains(referenceKeys, k) && !(local && k == "name") {
					m[k] = t.token(expr)
				} else if k == "namespace" && s == t.namespace {
					m[k] = t.token("{{ .Release.Namespace }}")
				}
				continue
			}
			t.rewriteRefs(e)
		}
	case []any:
		for _, e := range m {
			t.rewriteRefs(e)
		}
	}
}

// object renders an overlay object named nameExpr: the release namespace,
// the chart's labels and rewritten references.
func (t *templater) object(o *unstructured.Unstructured, nameExpr string, clusterScoped bool) (string, error) {
	ns := "{{ .Release.Namespace }}"
	if clusterScoped {
		ns = ""
	}
	return t.objectIn(o, nameExpr, ns)
}

// objectIn is object in the namespace expression ns ("" for a
// cluster-scoped object).
func (t *templater) objectIn(o *unstructured.Unstructured, nameExpr, ns string) (string, error) {
	c := o.DeepCopy()
	t.rewriteRefs(c.Object)
	meta := c.Object["metadata"].(map[string]any)
	meta["name"] = t.token(nameExpr)
	if ns == "" {
		delete(meta, "namespace")
	} else {
		meta["namespace"] = t.token(ns)
	}
	t.labels(meta)
	return t.finish(c.Object)
}

// conditionalAnnotation adds "key: value" to the annotations of meta,
// rendered only when cond holds.
func (t *templater) conditionalAnnotation(meta map[string]any, cond, key, value string) {
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	ann[t.line(func(indent int) string {
		pad := strings.Repeat(" ", indent)
		return pad + "{{- if " + cond + " }}\n" + pad + key + ": " + value + "\n" + pad + "{{- end }}"
	})] = ""
	meta["annotations"] = ann
}

// conditionalItem replaces a list item with the same item rendered only
// when cond holds. Tokens inside item are resolved as usual.
func (t *templater) conditionalItem(item map[string]any, cond string) map[string]any {
	b, err := yaml.Marshal(item)
	text := strings.TrimSuffix(string(b), "\n")
	tok := t.line(func(indent int) string {
		pad := strings.Repeat(" ", indent)
		if err != nil {
			return pad + "# " + err.Error()
		}
		lines := strings.Split(text, "\n")
		for i := range lines {
			prefix := pad + "  "
			if i == 0 {
				prefix = pad + "- "
			}
			lines[i] = prefix + lines[i]
		}
		return pad + "{{- if " + cond + " }}\n" + strings.Join(lines, "\n") + "\n" + pad + "{{- end }}"
	})
	return map[string]any{tok: ""}
}

// fillPlaceholders renders every string of obj that holds a placeholder
// through the chart's placeholders helper, quoted.
func (t *templater) fillPlaceholders(obj map[string]any) {
	placeholderStrings(obj, func(s string) string {
		if !hasPlaceholder(s) {
			return s
		}
		return t.token(t.filled(strconv.Quote(s)))
	})
}

// filled is the action rendering the string expression expr with its
// placeholders filled, quoted; expr itself when the project has none.
func (t *templater) filled(expr string) string {
	if !t.fills {
		return "{{ " + expr + " | quote }}"
	}
	return fmt.Sprintf(`{{ include "%s.placeholders" (list $ %s) | quote }}`, t.chart, expr)
}
