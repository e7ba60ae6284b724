package packaging

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deploymentTemplate renders the manager Deployment with its image,
// replicas, resources, scheduling, security contexts, ServiceAccount and
// WATCH_NAMESPACE taken from the values.
func (p *Project) deploymentTemplate(t *templater, images []RelatedImage) (string, error) {
	d := p.managerRaw.DeepCopy()
	t.rewriteRefs(d.Object)
	spec := d.Object["spec"].(map[string]any)
	spec["replicas"] = t.token("{{ .Values.replicas }}")
	delete(spec, "strategy")
	spec[t.line(t.withBlock("strategy", ".Values.strategy"))] = ""
	matchLabels, _, _ := unstructured.NestedMap(spec, "selector", "matchLabels")
	t.selector(matchLabels)
	_ = unstructured.SetNestedMap(spec, matchLabels, "selector", "matchLabels")
	tmpl := spec["template"].(map[string]any)
	tmeta, _ := tmpl["metadata"].(map[string]any)
	if tmeta == nil {
		tmeta = map[string]any{}
	}
	tlabels, _ := tmeta["labels"].(map[string]any)
	if tlabels == nil {
		tlabels = map[string]any{}
	}
	t.selector(tlabels)
	tmeta["labels"] = tlabels
	t.mergeValues(tmeta, "labels", ".Values.podLabels")
	t.mergeValues(tmeta, "annotations", ".Values.podAnnotations")
	delete(tmeta, "creationTimestamp")
	tmpl["metadata"] = tmeta

	pod := tmpl["spec"].(map[string]any)
	for _, k := range []string{"nodeSelector", "tolerations", "affinity", "imagePullSecrets", "topologySpreadConstraints", "priorityClassName"} {
		delete(pod, k)
	}
	pod["terminationGracePeriodSeconds"] = t.token("{{ .Values.terminationGracePeriodSeconds }}")
	own := ""
	if pc := p.ownPriorityClass(); pc != "" {
		own = t.nameExpr("PriorityClass", pc, true)
	}
	pod[t.line(t.podExtras(own))] = ""
	pod["securityContext"] = t.block(".Values.podSecurityContext")
	h := p.hardening
	if h != nil && len(h.pod) > 0 {
		pod["securityContext"] = t.securityContext(t.mapOf(".Values.podSecurityContext"), h.pod)
	}
	pod["serviceAccountName"] = t.token(t.include("serviceAccountName"))
	if p.Webhook != nil {
		conditionalItems(t, pod, "volumes", "name", p.Webhook.Volume)
	}
	t.appendValues(pod, "volumes", ".Values.extraVolumes")
	mc := managerContainer(p.Manager)
	args := p.managerArgs()
	manager := mc.Name
	if h != nil {
		for _, kind := range []string{"initContainers", "containers"} {
			list, _ := pod[kind].([]any)
			for _, c := range list {
				cm, _ := c.(map[string]any)
				name, _ := cm["name"].(string)
				if add := h.containers[name]; len(add) > 0 && name != manager {
					cm["securityContext"] = t.securityContext(ownContext(h.origContainers[name]), add)
				}
			}
		}
	}
	for _, c := range pod["containers"].([]any) {
		cm := c.(map[string]any)
		if cm["name"] != manager {
			continue
		}
		switch {
		case koPattern.MatchString(mc.Image): // images.<name>, by fillPlaceholders
		case hasPlaceholder(mc.Image):
			cm["image"] = t.token(t.filled(fmt.Sprintf(`(include "%s.image" .)`, t.chart)))
		default:
			cm["image"] = t.token(fmt.Sprintf(`"{{ include "%s.image" . }}"`, t.chart))
		}
		cm["imagePullPolicy"] = t.token("{{ .Values.image.pullPolicy }}")
		if len(t.placeheld[".Values.image.pullPolicy"]) > 0 {
			cm["imagePullPolicy"] = t.token(t.filled(".Values.image.pullPolicy"))
		}
		cm["resources"] = t.block(".Values.resources")
		cm["securityContext"] = t.block(".Values.securityContext")
		if h != nil && len(h.containers[manager]) > 0 {
			cm["securityContext"] = t.securityContext(t.mapOf(".Values.securityContext"), h.containers[manager])
		}
		cm["env"] = t.templateEnv(cm["env"], images, *mc, p.watchEnvNames())
		if p.Webhook != nil {
			cm["env"] = t.webhookEnv(cm["env"], p.webhookEnvNames())
		}
		t.appendValues(cm, "env", ".Values.env")
		t.appendValues(cm, "envFrom", ".Values.envFrom")
		cm["args"] = t.templateArgs(args, images, *mc, p.watchFlagName())
		if p.Webhook != nil {
			conditionalItems(t, cm, "volumeMounts", "name", p.Webhook.Volume)
		}
		t.appendValues(cm, "volumeMounts", ".Values.extraVolumeMounts")
		t.templatePorts(cm, args)
	}
	meta := d.Object["metadata"].(map[string]any)
	meta["name"] = t.token(t.nameFor(p.Manager.Name, false))
	meta["namespace"] = t.token("{{ .Release.Namespace }}")
	t.labels(meta)
	return t.finish(d.Object)
}

// templateEnv sets the watch-namespace variables (watchEnvNames) from the
// values, adding them when the manager lacks them, and every operand
// image variable from .Values.relatedImages.
func (t *templater) templateEnv(env any, images []RelatedImage, c corev1.Container, watch []string) []any {
	operand := map[string]string{} // env name → relatedImages key
	for _, img := range OperandImages(c) {
		if img.Env != "" {
			operand[img.Env] = img.Key
		}
	}
	list, _ := env.([]any)
	set := map[string]bool{}
	for _, e := range list {
		m := e.(map[string]any)
		name, _ := m["name"].(string)
		switch {
		case slices.Contains(watch, name):
			set[name] = true
			delete(m, "valueFrom")
			m["value"] = t.token(fmt.Sprintf(`{{ include "%s.watchNamespaces" . | quote }}`, t.chart))
		case operand[name] != "" && listed(images, operand[name]):
			m["value"] = t.token(fmt.Sprintf(`{{ index .Values.relatedImages %q | quote }}`, operand[name]))
		}
	}
	for _, name := range watch {
		if !set[name] {
			list = append(list, map[string]any{"name": name,
				"value": t.token(fmt.Sprintf(`{{ include "%s.watchNamespaces" . | quote }}`, t.chart))})
		}
	}
	return list
}

// webhookEnv sets each env variable that switches the manager's webhook
// server (webhookEnvNames) from webhooks.enabled: ENABLE_* to "true" or
// "false", DISABLE_* the other way round; one the manager's Deployment
// already sets is overridden in place.
func (t *templater) webhookEnv(env any, names []string) any {
	list, _ := env.([]any)
	for _, name := range names {
		value := `{{ ternary "true" "false" .Values.webhooks.enabled | quote }}`
		if strings.Contains(name, "DISABLE") {
			value = `{{ ternary "false" "true" .Values.webhooks.enabled | quote }}`
		}
		i := slices.IndexFunc(list, func(e any) bool { m, _ := e.(map[string]any); return m["name"] == name })
		if i < 0 {
			list = append(list, map[string]any{"name": name})
			i = len(list) - 1
		}
		m := list[i].(map[string]any)
		delete(m, "valueFrom")
		m["value"] = t.token(value)
	}
	if len(list) == 0 {
		return env
	}
	return list
}

// securityContext renders a security context with what opctl added for
// Pod Security restricted (add), unless podSecurity.restricted is false,
// over ctx: a values path, or the project's own context as JSON. It is a
// JSON flow mapping on the key's line.
func (t *templater) securityContext(ctx string, add map[string]any) string {
	b, _ := json.Marshal(add)
	return t.token(fmt.Sprintf("{{ include \"%s.restricted\" (list . %s `%s`) }}", t.chart, ctx, b))
}

// ownContext is a security context as a template argument: fromJson of
// its JSON, or an empty dict.
func ownContext(v any) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" || string(b) == "{}" {
		return "(dict)"
	}
	return fmt.Sprintf("(fromJson `%s`)", b)
}

// conditionalItems renders the items of list m[key] whose field equals
// value only when webhooks are enabled.
func conditionalItems(t *templater, m map[string]any, key, field, value string) {
	list, _ := m[key].([]any)
	for i, it := range list {
		if item, ok := it.(map[string]any); ok && item[field] == value {
			list[i] = t.conditionalItem(item, ".Values.webhooks.enabled")
		}
	}
}

// listed reports whether key names an entry of relatedImages.
func listed(images []RelatedImage, key string) bool {
	return slices.ContainsFunc(images, func(i RelatedImage) bool { return i.Name == key })
}

// ownPriorityClass is the overlay PriorityClass the manager pod uses, or "".
func (p *Project) ownPriorityClass() string {
	name := p.Manager.Spec.Template.Spec.PriorityClassName
	for _, o := range p.Objects {
		if o.GetKind() == "PriorityClass" && o.GetName() == name {
			return name
		}
	}
	return ""
}
