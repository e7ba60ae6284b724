package packaging

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	// RBACScope is the default of rbac.scope: namespace or cluster; empty
	// means namespace, or cluster for a manager that reads no
	// watch-namespace setting (it would list what Roles do not grant).
	RBACScope string
	// convertedTemplated keeps CRDs converted by a webhook templated in any
	// layout; set when opctl, not the user, chose the layout for size.
	convertedTemplated bool
	// crdCharts puts each CRD in a CRD chart by index (0 is <name>-crds),
	// when opctl packed them for size; empty means all in <name>-crds.
	crdCharts map[string]int
}

var (
	// monitoringKinds need the Prometheus operator's CRDs.
	monitoringKinds = []string{"PodMonitor", "PrometheusRule", "ServiceMonitor"}
	rbacKinds       = []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}
)

// Chart renders the Helm chart (and, with CRDsSeparateChart, the CRD
// chart) under charts/. Warnings say what was left out and why.
//
// Without opts.CRDs, CRDs are templated unless the release record would not
// fit the Secret Helm keeps it in; they then go to their own chart, with a
// warning.
func (p *Project) Chart(opts ChartOptions) (Files, []string, error) {
	if opts.CRDs != "" {
		files, warnings, err := p.chart(opts)
		if err != nil {
			return nil, nil, err
		}
		if _, err := p.recordFits(new(recorder), &layoutTry{files: files, crds: opts.CRDs}); err != nil {
			return nil, nil, err
		}
		return files, warnings, nil
	}
	// Each layout in turn, the first whose release records fit: templated,
	// then crds/ (the CRDs once in the record), then the CRDs packed into
	// as many charts of their own as their records need.
	var tried []string
	l := &layouts{p: p, opts: opts, records: new(recorder), tries: map[string]*layoutTry{}}
	for _, mode := range []string{CRDsTemplated, CRDsDir, crdsPacked} {
		if mode == CRDsTemplated {
			// The templated record holds the CRDs twice, the crds/ one
			// once and the rest alike: when the crds/ one does not fit,
			// neither does this, which is not measured.
			if over, err := l.dirOver(); err != nil {
				return nil, nil, err
			} else if over > 0 {
				tried = append(tried, fmt.Sprintf("with --crds %s a Helm release record would be over %d bytes", mode, over))
				continue
			}
		}
		t := l.try(mode)
		if t.packErr != nil {
			tried = append(tried, t.packErr.Error())
			break
		}
		if t.err != nil {
			if len(tried) > 0 { // a layout the CRDs cannot take (conversion webhooks)
				break
			}
			return nil, nil, t.err
		}
		if t.fitErr == nil {
			warnings := t.warnings
			if len(tried) > 0 {
				how := "uses --crds " + mode + " instead" + layoutNote[mode]
				if mode == crdsPacked {
					how = p.packedHow(t.files, t.crdCharts)
				}
				warnings = append(warnings, fmt.Sprintf("%s, over the %d bytes a Secret holds, so helm install would fail: the chart %s", strings.Join(tried, "; "), MaxReleaseRecordBytes, how))
			}
			return t.files, warnings, nil
		}
		if t.n == 0 {
			return nil, nil, t.fitErr
		}
		tried = append(tried, fmt.Sprintf("with --crds %s a Helm release record would be %d bytes", mode, t.n))
	}
	return nil, nil, fmt.Errorf("%s/%s: %s, over the %d bytes a Secret holds, so helm install would fail in every layout: trim the CRDs' descriptions (controller-gen crd:maxDescLen=0)", chartsDir, p.Name, strings.Join(tried, "; "), MaxReleaseRecordBytes)
}

// layouts renders and measures the chart in each CRD layout once.
type layouts struct {
	p       *Project
	opts    ChartOptions
	records *recorder
	tries   map[string]*layoutTry
}

// layoutTry is the chart in one layout and whether its records fit.
type layoutTry struct {
	files     Files
	warnings  []string
	crdCharts map[string]int
	n         int    // the size of the first record over the cap
	fitErr    error  // the records do not fit (n > 0), or measuring failed
	err       error  // the chart could not be rendered in this layout
	packErr   error  // the CRDs could not be packed
	crds      string // the --crds mode rendered
	// measured are the CRD charts whose record packCRDs measured.
	measured map[string]bool
	checked  bool
	// estimates are recordEstimate of each chart, by directory.
	estimates map[string]int
}

// estimate is recordEstimate of the chart under dir, computed once.
func (t *layoutTry) estimate(dir string) int {
	if n, ok := t.estimates[dir]; ok {
		return n
	}
	if t.estimates == nil {
		t.estimates = map[string]int{}
	}
	t.estimates[dir] = recordEstimate(t.files, dir)
	return t.estimates[dir]
}

// try renders and measures the chart in mode.
func (l *layouts) try(mode string) *layoutTry {
	t := l.build(mode)
	if !t.checked && t.err == nil && t.packErr == nil {
		t.checked = true
		t.n, t.fitErr = l.p.recordFits(l.records, t)
	}
	return t
}

// build renders the chart in mode.
func (l *layouts) build(mode string) *layoutTry {
	if t, ok := l.tries[mode]; ok {
		return t
	}
	t := &layoutTry{}
	l.tries[mode] = t
	opts := l.opts
	opts.CRDs, opts.convertedTemplated = mode, true
	if mode == crdsPacked {
		a, err := l.p.analyze()
		if err != nil {
			t.err = err
			return t
		}
		var measured map[int]bool
		if opts.crdCharts, measured, t.packErr = l.p.packCRDs(a.crdTexts); t.packErr != nil {
			return t
		}
		t.measured = map[string]bool{}
		for i, ok := range measured {
			if ok {
				t.measured[crdChartDir(l.p.Name, i)+"/"] = true
			}
		}
		opts.CRDs, t.crdCharts = CRDsSeparateChart, opts.crdCharts
	}
	t.crds = opts.CRDs
	t.files, t.warnings, t.err = l.p.chart(opts)
	return t
}

// dirOver is the size of the crds/ layout's record when it does not fit
// and the templated layout's would need measuring, else 0.
func (l *layouts) dirOver() (int, error) {
	a, err := l.p.analyze()
	if err != nil {
		return 0, err
	}
	if crdTextBytes(a.crdTexts) < recordCheckBytes {
		return 0, nil
	}
	if t := l.build(CRDsTemplated); t.err != nil || t.estimate(chartsDir+"/"+l.p.Name+"/") <= MaxReleaseRecordBytes*4/5 {
		return 0, nil // measured, or refused, as the templated layout
	}
	if t := l.try(CRDsDir); t.err == nil && t.fitErr != nil && t.n > 0 {
		return t.n, nil
	}
	return 0, nil
}

// packedHow says how to install the packed CRD charts: those of CRDs a
// webhook converts after the main chart, naming its release.
func (p *Project) packedHow(files Files, crdCharts map[string]int) string {
	dirs := crdChartDirs(files, p.Name)
	conv := p.conversionCharts(crdCharts)
	var first, after []string
	for i, d := range dirs {
		if conv[i] {
			after = append(after, d)
		} else {
			first = append(first, d)
		}
	}
	how := fmt.Sprintf("puts the CRDs in %d charts of their own", len(dirs))
	if len(first) > 0 {
		how += fmt.Sprintf(" (%s), to install first, each as its own release", strings.Join(first, ", "))
	}
	if len(after) > 0 {
		how += fmt.Sprintf("; %s hold the CRDs a webhook converts: install them after %s, each as its own release with conversion.release set to the %s release's name", strings.Join(after, ", "), p.Name, p.Name)
	}
	return how
}

// layoutNote says what a CRD layout chosen for size means to the user.
var layoutNote = map[string]string{
	CRDsDir: " (Helm installs the CRDs from crds/ but never upgrades them: apply new CRDs with kubectl before helm upgrade)",
}

// recordFits measures the release records of the charts in files, when
// the CRDs are large enough to matter. It returns the size of the first
// that does not fit and an error; 0 and an error when measuring failed.
func (p *Project) recordFits(records *recorder, t *layoutTry) (int, error) {
	files, mode := t.files, t.crds
	a, err := p.analyze()
	if err != nil {
		return 0, err
	}
	if crdTextBytes(a.crdTexts) < recordCheckBytes {
		return 0, nil
	}
	charts := []string{chartsDir + "/" + p.Name + "/"}
	if mode == CRDsSeparateChart {
		for _, d := range crdChartDirs(files, p.Name) {
			charts = append(charts, d+"/")
		}
	}
	for _, dir := range charts {
		if t.measured[dir] || t.estimate(dir) <= MaxReleaseRecordBytes*4/5 {
			continue // measured when packed, or well inside: no need to render
		}
		n, err := records.size(files, dir)
		if err != nil {
			return 0, err
		}
		if n > MaxReleaseRecordBytes {
			return n, fmt.Errorf("%s: its Helm release record would be %d bytes, over the %d a Secret holds, so helm install would fail: use --crds %s, or trim the CRDs' descriptions (controller-gen crd:maxDescLen=0)", strings.TrimSuffix(dir, "/"), n, MaxReleaseRecordBytes, CRDsDir)
		}
	}
	return 0, nil
}

// chart renders the chart with the CRD layout opts names.
func (p *Project) chart(opts ChartOptions) (Files, []string, error) {
	var scopeWarning string
	if opts.RBACScope == "" {
		opts.RBACScope = p.Config.RBACScope
	}
	switch {
	case opts.RBACScope == "" && p.allNamespacesOnly():
		// Roles in one namespace would not let it list the others.
		opts.RBACScope = "cluster"
	case opts.RBACScope == "":
		opts.RBACScope = "namespace"
	case opts.RBACScope == "namespace" && p.allNamespacesOnly():
		scopeWarning = "--rbac-scope namespace: the manager reads no watch-namespace setting, so it lists every namespace and, granted Roles in the watched ones only, is refused elsewhere; its chart works with rbac.scope=cluster"
	}
	if !slices.Contains([]string{CRDsTemplated, CRDsSeparateChart, CRDsDir}, opts.CRDs) {
		return nil, nil, fmt.Errorf("--crds %q: use templated, separate-chart or crds-dir", opts.CRDs)
	}
	if opts.RBACScope != "namespace" && opts.RBACScope != "cluster" {
		return nil, nil, fmt.Errorf("--rbac-scope %q: use namespace or cluster (the flag, or rbacScope in %s)", opts.RBACScope, ConfigFile)
	}
	a, err := p.analyze()
	if err != nil {
		return nil, nil, err
	}
	mgr, pacs, warnings := p.ManagerGrant(a.grants), a.pacs, a.warnings
	images := p.RelatedImages()
	t := newTemplater(p.Name, p.NamePrefix, p.Namespace)
	t.podName = p.Manager.Spec.Template.Labels[nameLabel]
	phs, kos := p.scanPlaceholders()
	t.fills = len(phs)+len(kos) > 0
	vals := p.values(opts, images, pacs)
	t.placeheld = placeheldValues(vals, p.Config.ExtraValues)
	notePlaceheld(vals, t.placeheld, kos, ".Values")
	vals = append(vals, placeholderValues(phs, kos)...)
	t.imageKeys = map[string]string{}
	for _, img := range images {
		t.imageKeys[img.Image] = img.Name
	}
	t.renames[p.Manager.Name] = t.nameFor(p.Manager.Name, false)
	for _, o := range slices.Concat(p.Objects, p.Optional) {
		if o.GetKind() != "APIService" && o.GetKind() != "Namespace" {
			t.renames[o.GetName()] = t.nameOf(o.GetKind(), o.GetName(), p.clusterScoped(o))
		}
	}
	t.renames[mgr.ServiceAccount] = t.include("serviceAccountName")
	if p.Webhook != nil && p.Webhook.Secret != "" {
		t.renames[p.Webhook.Secret] = t.nameFor(p.Webhook.Secret, false)
	}
	for _, o := range p.Objects {
		if s, _, _ := unstructured.NestedString(o.Object, "spec", "secretName"); o.GetKind() == "Certificate" && s != "" {
			t.renames[s] = t.nameFor(s, false) // the Secret it issues
		}
	}
	for _, name := range p.webhookIssuers() {
		t.renames[name] = t.nameFor(p.NamePrefix+"selfsigned-issuer", false) // the chart's own
	}

	dir := chartsDir + "/" + p.Name + "/"
	files := Files{}
	deploy, err := p.deploymentTemplate(t, images)
	if err != nil {
		return nil, nil, err
	}
	files[dir+"templates/deployment.yaml"] = []byte(deploy)
	rbac, err := rbacTemplate(p.Name, p.managerRBACBase(mgr), mgr)
	if err != nil {
		return nil, nil, err
	}
	files[dir+"templates/rbac-manager.yaml"] = []byte(rbac)
	if err := p.extraTemplates(files, dir); err != nil {
		return nil, nil, err
	}
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
	if err := p.crdFiles(files, dir, opts, a.crdTexts); err != nil {
		return nil, nil, err
	}
	if len(pacs) > 0 {
		files[dir+"templates/platform-as-code.yaml"] = []byte(pacTemplate(p.Name))
	}
	if p.Webhook != nil {
		hooks, err := p.webhookTemplate(t, pacs, opts.crdCharts, a.crdTexts)
		if err != nil {
			return nil, nil, err
		}
		files[dir+"templates/webhooks.yaml"] = []byte(hooks)
		for _, crd := range p.conversionCRDs() {
			i, ok := opts.crdCharts[crd.Name]
			if !ok {
				continue
			}
			text, err := p.packedConversionCRD(t, crd, pacs, a.crdTexts[crd.Name])
			if err != nil {
				return nil, nil, err
			}
			files[crdChartDir(p.Name, i)+"/templates/crds/"+crd.Name+".yaml"] = []byte(text)
		}
	}
	if scopeWarning != "" {
		warnings = append(warnings, scopeWarning)
	}
	if err := chartMeta(files, dir, p, vals, mgr, opts); err != nil {
		return nil, nil, err
	}
	if t.filledValues {
		files[dir+"templates/_helpers.tpl"] = append(files[dir+"templates/_helpers.tpl"], filledValueHelper(p.Name, phs, kos)...)
	}
	return files, warnings, nil
}

// foldedIntoGrant reports an object the chart renders as the manager's
// own RBAC (rbacTemplate) rather than as itself: its ClusterRoles and the
// ClusterRoleBindings that bind them to it.
func (p *Project) foldedIntoGrant(o *unstructured.Unstructured, mgr Grant) bool {
	switch o.GetKind() {
	case "ClusterRole":
		return slices.Contains(mgr.ClusterRoles, o.GetName())
	case "ClusterRoleBinding":
		return p.bindsManager(o, mgr)
	}
	return false
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
	case p.foldedIntoGrant(o, mgr):
		return "", true, nil
	}
	o = p.selectRelease(t, o).DeepCopy()
	switch {
	case kind == "Service" && p.Webhook != nil && o.GetName() == p.Webhook.Service:
		// The first webhook Service's port is webhooks.port; others keep theirs.
		if i, err := p.webhookPortIndex(o); err == nil {
			ports, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
			ports[i].(map[string]any)["port"] = t.token("{{ .Values.webhooks.port }}")
			_ = unstructured.SetNestedSlice(o.Object, ports, "spec", "ports")
		}
	case kind == "Service" && p.metricsService(o):
		t.templateServicePorts(o.Object, p.managerArgs())
	case slices.Contains(workloadKinds, kind):
		t.templateWorkload(o)
		p.gateCertVolumes(t, o)
	case kind == "Certificate" && isCertManager(o):
		t.templateCertificate(o)
	}
	cluster := p.clusterScoped(o)
	if kind == "APIService" { // its name is the group version it serves
		text, err := t.object(o, o.GetName(), true)
		return apiServiceTemplate(text), false, err
	}
	if kind == "Namespace" { // a shared namespace, by its name
		text, err := t.object(o, o.GetName(), true)
		return "{{- if .Values.sharedNamespaces.create }}\n" + text + "{{- end }}\n", false, err
	}
	if ns := o.GetNamespace(); p.sharedNamespace(ns) { // stays in its namespace
		text, err := t.objectIn(o, t.nameOf(kind, o.GetName(), false), ns)
		return text, false, err
	}
	text, err := t.object(o, t.nameOf(kind, o.GetName(), cluster), cluster)
	if err != nil {
		return "", false, err
	}
	switch {
	case kind == "ClusterRole" && p.helperRole(o):
		text = "{{- if and .Values.rbac.create .Values.rbac.helpers.enabled }}\n" + text + "{{- end }}\n"
	case slices.Contains(rbacKinds, kind):
		text = "{{- if .Values.rbac.create }}\n" + text + "{{- end }}\n"
	case kind == "Service" && p.Webhook != nil && p.Webhook.webhookService(o.GetName()) != nil:
		text = "{{- if .Values.webhooks.enabled }}\n" + text + "{{- end }}\n"
	case kind == "Service" && p.metricsService(o):
		text = "{{- if .Values.metrics.enabled }}\n" + text + "{{- end }}\n"
	case isCertManager(o):
		text = "{{- if .Values.certManager.enabled }}\n" + text + "{{- end }}\n"
	case slices.Contains(monitoringKinds, kind):
		// Clusters without the Prometheus operator still install the chart.
		text = "{{- if .Capabilities.APIVersions.Has \"" + o.GetAPIVersion() + "\" }}\n" + text + "{{- end }}\n"
	}
	if v := p.componentOf(o); v != "" {
		text = "{{- if .Values." + v + ".enabled }}\n" + text + "{{- end }}\n"
	}
	return text, false, nil
}

// gateCertVolumes puts a workload's volumes of the webhook serving Secret
// (a webhook server beside the manager), and their mounts, behind
// webhooks.enabled, which renders the Secret.
func (p *Project) gateCertVolumes(t *templater, o *unstructured.Unstructured) {
	if p.Webhook == nil || p.Webhook.Secret == "" {
		return
	}
	pod, _, _ := unstructured.NestedMap(o.Object, "spec", "template", "spec")
	if pod == nil {
		return
	}
	vols, _ := pod["volumes"].([]any)
	for _, v := range vols {
		vol, _ := v.(map[string]any)
		if name, _, _ := unstructured.NestedString(vol, "secret", "secretName"); name != p.Webhook.Secret {
			continue
		}
		volName, _ := vol["name"].(string)
		t.rewriteRefs(vol) // the item becomes text, which rewriting skips
		conditionalItems(t, pod, "volumes", "name", volName)
		for _, c := range slices.Concat(asList(pod["initContainers"]), asList(pod["containers"])) {
			if m, ok := c.(map[string]any); ok {
				conditionalItems(t, m, "volumeMounts", "name", volName)
			}
		}
	}
	_ = unstructured.SetNestedMap(o.Object, pod, "spec", "template", "spec")
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
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
// annotations. CRDs converted by a webhook are templated with the CA, in
// templates/webhooks.yaml or, packed for size, in CRD charts of their own
// (chart writes both); a layout the user names refuses them.
func (p *Project) crdFiles(files Files, dir string, opts ChartOptions, texts map[string][]byte) error {
	mode := opts.CRDs
	converted := p.conversionCRDs()
	for _, crd := range p.CRDs {
		if slices.Contains(converted, crd) {
			if mode != CRDsTemplated && !opts.convertedTemplated {
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
				target = crdChartDir(p.Name, opts.crdCharts[crd.Name]) + "/"
			}
			text, err := crdTemplateText(b)
			if err != nil {
				return fmt.Errorf("CustomResourceDefinition %s: %w", crd.Name, err)
			}
			files[target+"templates/crds/"+crd.Name+".yaml"] = []byte(text)
		}
	}
	if mode == CRDsSeparateChart {
		used := map[int]bool{0: true}
		for _, i := range opts.crdCharts {
			used[i] = true
		}
		conv := p.conversionCharts(opts.crdCharts)
		for _, i := range slices.Sorted(maps.Keys(used)) {
			if err := crdChart(files, p, crdChartDir(p.Name, i), conv[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// crdTemplate renders a CRD with t, whose tokens m may hold; tail, text
// already rendered, follows the rest of the CRD.
func crdTemplate(t *templater, m map[string]any, tail string) (string, error) {
	t.conditionalAnnotation(m["metadata"].(map[string]any), ".Values.crds.keep", "helm.sh/resource-policy", "keep")
	text, err := t.finish(m)
	if err != nil {
		return "", err
	}
	return "{{- if .Values.crds.install }}\n" + text + tail + "{{- end }}\n", nil
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
