package packaging

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// CRD placement in the chart.
const (
	// CRDsTemplated puts CRDs under templates/crds behind crds.install, so
	// helm upgrade upgrades them. The default.
	CRDsTemplated = "templated"
	// CRDsSeparateChart emits them as their own <name>-crds chart.
	CRDsSeparateChart = "separate-chart"
	// CRDsDir uses Helm's crds/ directory: installed once, never upgraded.
	CRDsDir = "crds-dir"
)

// ChartOptions tune the chart.
type ChartOptions struct {
	// CRDs is CRDsTemplated (default), CRDsSeparateChart or CRDsDir.
	CRDs string
	// RBACScope is the default of rbac.scope: namespace (default) or cluster.
	RBACScope string
}

// Files is a generated tree: slash-separated relative path → content.
type Files map[string][]byte

var (
	// monitoringKinds need the Prometheus operator's CRDs.
	monitoringKinds = []string{"PodMonitor", "PrometheusRule", "ServiceMonitor"}
	rbacKinds       = []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
)

// Chart renders the Helm chart (and, with CRDsSeparateChart, the CRD
// chart) under charts/. Warnings say what was left out and why.
func (p *Project) Chart(opts ChartOptions) (Files, []string, error) {
	if opts.CRDs == "" {
		opts.CRDs = CRDsTemplated
	}
	if opts.RBACScope == "" {
		opts.RBACScope = "namespace"
	}
	if !slices.Contains([]string{CRDsTemplated, CRDsSeparateChart, CRDsDir}, opts.CRDs) {
		return nil, nil, fmt.Errorf("--crds %q: use templated, separate-chart or crds-dir", opts.CRDs)
	}
	if opts.RBACScope != "namespace" && opts.RBACScope != "cluster" {
		return nil, nil, fmt.Errorf("--rbac-scope %q: use namespace or cluster", opts.RBACScope)
	}
	a, err := p.analyze()
	if err != nil {
		return nil, nil, err
	}
	mgr, pacs, warnings := p.ManagerGrant(a.grants), a.pacs, a.warnings
	images := p.RelatedImages()
	t := newTemplater(p.Name, p.NamePrefix, p.Namespace)
	t.podName = p.Manager.Spec.Template.Labels[nameLabel]
	t.imageKeys = map[string]string{}
	for _, img := range images {
		t.imageKeys[img.Image] = img.Name
	}
	t.renames[p.Manager.Name] = t.nameFor(p.Manager.Name, false)
	for _, o := range slices.Concat(p.Objects, p.Optional) {
		t.renames[o.GetName()] = t.nameOf(o.GetKind(), o.GetName(), p.clusterScoped(o))
	}
	t.renames[mgr.ServiceAccount] = t.include("serviceAccountName")
	if p.Webhook != nil && p.Webhook.Secret != "" {
		t.renames[p.Webhook.Secret] = t.nameFor(p.Webhook.Secret, false)
	}

	dir := "charts/" + p.Name + "/"
	files := Files{}
	deploy, err := p.deploymentTemplate(t, images)
	if err != nil {
		return nil, nil, err
	}
	files[dir+"templates/deployment.yaml"] = []byte(deploy)
	rbac, err := rbacTemplate(p.Name, mgr)
	if err != nil {
		return nil, nil, err
	}
	files[dir+"templates/rbac-manager.yaml"] = []byte(rbac)
	for _, o := range slices.Concat(p.Objects, p.Optional) {
		w, err := p.checkKind(o)
		if err != nil {
			return nil, nil, err
		}
		if w != "" {
			warnings = append(warnings, w)
		}
		text, skip, err := p.objectTemplate(t, o, mgr)
		if err != nil {
			return nil, nil, err
		}
		if !skip {
			name := strings.ToLower(o.GetKind()) + "-" + strings.TrimPrefix(o.GetName(), p.NamePrefix) + ".yaml"
			files[dir+"templates/"+name] = []byte(text)
		}
	}
	if err := p.crdFiles(files, dir, opts.CRDs, a.crdTexts); err != nil {
		return nil, nil, err
	}
	if len(pacs) > 0 {
		files[dir+"templates/platform-as-code.yaml"] = []byte(pacTemplate(p.Name))
	}
	if p.Webhook != nil {
		hooks, err := p.webhookTemplate(t, pacs)
		if err != nil {
			return nil, nil, err
		}
		files[dir+"templates/webhooks.yaml"] = []byte(hooks)
	}
	vals := p.values(opts, images, pacs)
	if err := chartMeta(files, dir, p, vals, mgr, opts); err != nil {
		return nil, nil, err
	}
	return files, warnings, nil
}

// objectTemplate renders one overlay object, or skips it when the chart
// renders it another way (the manager's ServiceAccount and ClusterRoles).
func (p *Project) objectTemplate(t *templater, o *unstructured.Unstructured, mgr Grant) (string, bool, error) {
	kind := o.GetKind()
	switch {
	case kind == "ServiceAccount" && o.GetName() == mgr.ServiceAccount:
		text, err := t.object(o, t.include("serviceAccountName"), false)
		if err != nil {
			return "", false, err
		}
		return "{{- if .Values.serviceAccount.create }}\n" + text + "{{- end }}\n", false, nil
	case kind == "ClusterRole" && slices.Contains(mgr.ClusterRoles, o.GetName()):
		return "", true, nil
	case kind == "ClusterRoleBinding" && p.bindsManager(o, mgr):
		return "", true, nil
	}
	o = p.selectRelease(t, o).DeepCopy()
	switch {
	case kind == "Service" && p.Webhook != nil && o.GetName() == p.Webhook.Service:
		ports, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
		ports[0].(map[string]any)["port"] = t.token("{{ .Values.webhooks.port }}")
		_ = unstructured.SetNestedSlice(o.Object, ports, "spec", "ports")
	case kind == "Service" && p.metricsService(o):
		t.templateServicePorts(o.Object, p.managerArgs())
	case slices.Contains(workloadKinds, kind):
		t.templateWorkload(o)
	}
	cluster := p.clusterScoped(o)
	text, err := t.object(o, t.nameOf(kind, o.GetName(), cluster), cluster)
	if err != nil {
		return "", false, err
	}
	switch {
	case kind == "ClusterRole" && p.helperRole(o):
		text = "{{- if and .Values.rbac.create .Values.rbac.helpers.enabled }}\n" + text + "{{- end }}\n"
	case slices.Contains(rbacKinds, kind):
		text = "{{- if .Values.rbac.create }}\n" + text + "{{- end }}\n"
	case kind == "Service" && p.Webhook != nil && o.GetName() == p.Webhook.Service:
		text = "{{- if .Values.webhooks.enabled }}\n" + text + "{{- end }}\n"
	case kind == "Service" && p.metricsService(o):
		text = "{{- if .Values.metrics.enabled }}\n" + text + "{{- end }}\n"
	case slices.Contains(monitoringKinds, kind):
		// Clusters without the Prometheus operator still install the chart.
		text = "{{- if .Capabilities.APIVersions.Has \"" + o.GetAPIVersion() + "\" }}\n" + text + "{{- end }}\n"
	}
	if v := p.componentOf(o); v != "" {
		text = "{{- if .Values." + v + ".enabled }}\n" + text + "{{- end }}\n"
	}
	return text, false, nil
}

func (p *Project) bindsManager(o *unstructured.Unstructured, mgr Grant) bool {
	ref, _, _ := unstructured.NestedString(o.Object, "roleRef", "name")
	return slices.Contains(mgr.ClusterRoles, ref)
}

// selectorPaths are where kinds select the manager pods (or, for the
// monitors, the Services labelled like them).
var selectorPaths = map[string][]string{
	"Service":             {"spec", "selector"},
	"NetworkPolicy":       {"spec", "podSelector", "matchLabels"},
	"ServiceMonitor":      {"spec", "selector", "matchLabels"},
	"PodMonitor":          {"spec", "selector", "matchLabels"},
	"PodDisruptionBudget": {"spec", "selector", "matchLabels"},
}

// selectRelease narrows a selector of the manager pods to this release's.
func (p *Project) selectRelease(t *templater, o *unstructured.Unstructured) *unstructured.Unstructured {
	path, ok := selectorPaths[o.GetKind()]
	if !ok {
		return o
	}
	sel, found, _ := unstructured.NestedStringMap(o.Object, path...)
	if !found {
		return o
	}
	manager, workload := p.selectsManager(sel), p.selectsWorkload(sel)
	if !manager && !workload {
		return o
	}
	o = o.DeepCopy()
	m, _, _ := unstructured.NestedMap(o.Object, path...)
	if manager {
		t.selector(m)
	} else {
		t.instance(m)
	}
	_ = unstructured.SetNestedMap(o.Object, m, path...)
	return o
}

// selectsWorkload reports a selector that picks the pods of an extra
// workload.
func (p *Project) selectsWorkload(sel map[string]string) bool {
	for _, o := range p.Objects {
		if !slices.Contains(workloadKinds, o.GetKind()) {
			continue
		}
		labels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
		if subset(sel, labels) {
			return true
		}
	}
	return false
}

func subset(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// selectsManager reports a selector that picks the manager pods.
func (p *Project) selectsManager(sel map[string]string) bool {
	return subset(sel, p.Manager.Spec.Template.Labels)
}

// crdFiles places the CRDs as opts asks, with the platform-as-code
// annotations.
func (p *Project) crdFiles(files Files, dir, mode string, texts map[string][]byte) error {
	for _, crd := range p.CRDs {
		if slices.Contains(p.conversionCRDs(), crd) {
			if mode != CRDsTemplated {
				return fmt.Errorf("CustomResourceDefinition %s is converted by a webhook, which is the release's Service: use --crds %s", crd.Name, CRDsTemplated)
			}
			continue // templates/webhooks.yaml renders it with its CA
		}
		b := texts[crd.Name]
		switch mode {
		case CRDsDir:
			files[dir+"crds/"+crd.Name+".yaml"] = b
		case CRDsTemplated, CRDsSeparateChart:
			target := dir
			if mode == CRDsSeparateChart {
				target = "charts/" + p.Name + "-crds/"
			}
			text, err := crdTemplateText(b)
			if err != nil {
				return fmt.Errorf("CustomResourceDefinition %s: %w", crd.Name, err)
			}
			files[target+"templates/crds/"+crd.Name+".yaml"] = []byte(text)
		}
	}
	if mode == CRDsSeparateChart {
		return crdChart(files, p)
	}
	return nil
}

// crdWithPAC is a copy of crd with its platform-as-code annotations.
func (p *Project) crdWithPAC(crd *apiextensionsv1.CustomResourceDefinition, pacs []PlatformAsCode) *apiextensionsv1.CustomResourceDefinition {
	c := crd.DeepCopy()
	ann := c.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	for _, pac := range pacs {
		if pac.CRD == c.Name {
			for k, v := range pac.Annotations {
				ann[k] = v
			}
		}
	}
	c.SetAnnotations(ann)
	return c
}

// crdMap converts a CRD for output, without status and server fields.
func crdMap(c *apiextensionsv1.CustomResourceDefinition) (map[string]any, error) {
	c.APIVersion, c.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		return nil, fmt.Errorf("CRD %s: %w", c.Name, err)
	}
	delete(m, "status")
	meta := m["metadata"].(map[string]any)
	delete(meta, "creationTimestamp")
	return m, nil
}

// crdTemplate renders a CRD with t, whose tokens m may hold.
func crdTemplate(t *templater, m map[string]any) (string, error) {
	meta := m["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	ann[t.line(func(indent int) string {
		pad := strings.Repeat(" ", indent)
		return pad + "{{- if .Values.crds.keep }}\n" + pad + "helm.sh/resource-policy: keep\n" + pad + "{{- end }}"
	})] = ""
	meta["annotations"] = ann
	text, err := t.finish(m)
	if err != nil {
		return "", err
	}
	return "{{- if .Values.crds.install }}\n" + text + "{{- end }}\n", nil
}

// pacTemplate renders one ConfigMap per CRD from .Values.platformAsCode.
// Its name is fixed, not per release, because the CRD annotations name it.
func pacTemplate(chart string) string {
	return strings.ReplaceAll(`{{- range $crd, $figures := .Values.platformAsCode }}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $crd }}-platform-as-code
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "CHART.labels" $ | nindent 4 }}
data:
  {{- range $k, $v := $figures }}
  {{ $k }}: {{ $v | toString | quote }}
  {{- end }}
{{- end }}
`, "CHART", chart)
}

// values builds the documented values of the chart.
func (p *Project) values(opts ChartOptions, images []RelatedImage, pacs []PlatformAsCode) []value {
	c := managerContainer(p.Manager)
	repo, tag, digest := splitImage(c.Image)
	if tag == p.Version {
		tag = ""
	}
	pull := string(c.ImagePullPolicy)
	if pull == "" {
		pull = "IfNotPresent"
	}
	replicas := int64(1)
	if p.Manager.Spec.Replicas != nil {
		replicas = int64(*p.Manager.Spec.Replicas)
	}
	pod := p.Manager.Spec.Template.Spec
	args := p.managerArgs()
	priorityClass := pod.PriorityClassName
	if p.ownPriorityClass() != "" {
		priorityClass = "" // the chart's own, named per release
	}
	grace := int64(30)
	if pod.TerminationGracePeriodSeconds != nil {
		grace = *pod.TerminationGracePeriodSeconds
	}
	relImgs := map[string]any{}
	for _, img := range images {
		relImgs[img.Name] = img.Image
	}
	pacVals := map[string]any{}
	for _, pac := range pacs {
		f := map[string]any{}
		for k, v := range pac.Figures {
			f[k] = v
		}
		pacVals[pac.CRD] = f
	}
	vs := []value{
		{Key: "nameOverride", Doc: "Overrides the chart name in object names.", Val: "", Pattern: dnsLabelOrEmpty},
		{Key: "fullnameOverride", Doc: "Overrides the full name prefix of objects.", Val: "", Pattern: dnsLabelOrEmpty},
		{Key: "replicas", Doc: "Operator replicas; more than one elects a leader.", Val: replicas},
		{Key: "image", Doc: "The operator image.", Kids: []value{
			{Key: "repository", Doc: "Image repository.", Val: repo},
			{Key: "tag", Doc: "Image tag; empty means the chart's appVersion.", Val: tag},
			{Key: "digest", Doc: "Image digest (sha256:...); when set it is used instead of the tag.", Val: digest},
			{Key: "pullPolicy", Doc: "Image pull policy.", Val: pull, Enum: []string{"Always", "IfNotPresent", "Never"}},
		}},
		{Key: "imagePullSecrets", Doc: "Secrets for pulling the operator image.", Val: []any{}, Free: true},
		{Key: "args", Doc: "Arguments of the operator container, after the ones the chart sets from other values (metrics, related images).", Val: toAnyList(args.Plain), Items: "string"},
		{Key: "env", Doc: "Extra environment variables of the operator container.", Val: []any{}, Free: true},
		{Key: "envFrom", Doc: "Extra envFrom sources (ConfigMaps, Secrets) of the operator container.", Val: []any{}, Free: true},
		{Key: "podLabels", Doc: "Extra labels of the operator pod.", Val: map[string]any{}, Free: true},
		{Key: "podAnnotations", Doc: "Extra annotations of the operator pod.", Val: map[string]any{}, Free: true},
		{Key: "priorityClassName", Doc: p.priorityClassDoc(), Val: priorityClass, Pattern: dnsSubdomainOrEmpty},
		{Key: "topologySpreadConstraints", Doc: "Topology spread constraints of the operator pod.", Val: jsonList(pod.TopologySpreadConstraints), Free: true},
		{Key: "strategy", Doc: "Update strategy of the operator Deployment.", Val: jsonMap(p.Manager.Spec.Strategy), Free: true},
		{Key: "terminationGracePeriodSeconds", Doc: "Seconds the operator pod has to stop.", Val: grace},
		{Key: "extraVolumes", Doc: "Extra volumes of the operator pod.", Val: []any{}, Free: true},
		{Key: "extraVolumeMounts", Doc: "Extra volume mounts of the operator container.", Val: []any{}, Free: true},
		{Key: "resources", Doc: "Requests and limits of the operator container.", Val: jsonMap(c.Resources), Free: true},
		{Key: "nodeSelector", Doc: "Node labels the operator pod must match.", Val: jsonMap(pod.NodeSelector), Free: true},
		{Key: "tolerations", Doc: "Tolerations of the operator pod.", Val: jsonList(pod.Tolerations), Free: true},
		{Key: "affinity", Doc: "Affinity of the operator pod.", Val: jsonMap(pod.Affinity), Free: true},
		{Key: "podSecurityContext", Doc: "Security context of the operator pod.", Val: jsonMap(pod.SecurityContext), Free: true},
		{Key: "securityContext", Doc: "Security context of the operator container.", Val: jsonMap(c.SecurityContext), Free: true},
		{Key: "serviceAccount", Doc: "The operator's ServiceAccount.", Kids: []value{
			{Key: "create", Doc: "Create the ServiceAccount.", Val: true},
			{Key: "name", Doc: "Name of the ServiceAccount; required when create is false.", Val: "", Pattern: dnsSubdomainOrEmpty},
		}},
		{Key: "rbac", Doc: "The operator's RBAC.", Kids: p.rbacValues(opts)},
		{Key: "watchNamespaces", Doc: "Namespaces the operator watches; empty means the release namespace with rbac.scope=namespace, all namespaces with rbac.scope=cluster.", Val: []any{}, Pattern: dnsLabelPattern},
		{Key: "crds", Doc: "The CRDs, when the chart carries them (--crds templated).", Kids: []value{
			{Key: "install", Doc: "Install and upgrade the CRDs with the release. Set false where another release or the platform owns them.", Val: true},
			{Key: "keep", Doc: "Keep the CRDs, and so every custom resource, when the release is uninstalled.", Val: true},
		}},
		{Key: "metrics", Doc: "The operator's metrics endpoint.", Kids: p.metricsValues(args)},
		{Key: "relatedImages", Doc: "Images the operator runs (containers, RELATED_IMAGE_* and *_IMAGE variables, --*image*= flags), by name; point them at a mirror here.", Val: relImgs, Free: true},
		{Key: "platformAsCode", Doc: "Platform-as-code figures per CRD, shipped as ConfigMaps named by the CRD annotations.", Val: pacVals, Free: true},
	}
	if p.Webhook != nil {
		vs = append(vs,
			value{Key: "webhooks", Doc: "The operator's admission webhooks.", Kids: []value{
				{Key: "enabled", Doc: "Register the webhooks and serve them; false renders nothing webhook-related.", Val: true},
				{Key: "port", Doc: "Port of the webhook Service, which the API server calls; it forwards to the manager's webhook server.", Val: int64(p.Webhook.Port), Min: 1, Max: 65535},
			}})
		if p.Webhook.Certificates != CertsOperator {
			vs = append(vs, value{Key: "certManager", Doc: "Serving certificates from cert-manager instead of a self-signed CA generated by Helm.", Kids: []value{
				{Key: "enabled", Doc: "Use cert-manager (it must be installed): an Issuer, a Certificate and CA injection.", Val: false},
			}})
		}
	}
	for _, c := range components {
		if on, ok := p.Components[c.Value]; ok {
			vs = append(vs, value{Key: c.Value, Doc: "The project's config/" + c.Dir + " component.", Kids: []value{
				{Key: "enabled", Doc: "Render config/" + c.Dir + ".", Val: on},
			}})
		}
	}
	for _, k := range sortedKeys(p.Config.ExtraValues) {
		vs = append(vs, value{Key: k, Doc: "From extraValues in " + ConfigFile + ".", Val: p.Config.ExtraValues[k], Free: true})
	}
	return vs
}

// jsonMap and jsonList turn typed values into plain YAML-able ones.
func jsonMap(v any) map[string]any {
	m := map[string]any{}
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m
}

func jsonList(v any) []any {
	l := []any{}
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, &l)
	}
	if l == nil {
		l = []any{}
	}
	return l
}
