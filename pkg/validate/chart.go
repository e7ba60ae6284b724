package validate

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// rendered is one object of a rendered chart and the template it came from.
type rendered struct {
	obj      *unstructured.Unstructured
	template string
}

// ValidateChart checks the chart in dir. An error means dir is not a
// loadable chart.
func ValidateChart(dir string, opts Options) (*Report, error) {
	c, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("%s is not a loadable Helm chart: %w", dir, err)
	}
	r := &Report{Path: dir, Kind: "chart", Findings: []Finding{}}
	for _, m := range lint.All(dir, nil, "default", true).Messages {
		if m.Severity <= support.InfoSev {
			continue
		}
		sev := SeverityWarning
		if m.Severity == support.ErrorSev {
			sev = SeverityError
		}
		r.relay(ChartLint, sev, m.Err.Error(), m.Path, "helm-lint")
	}
	sets := []map[string]any{nil}
	if rbac, ok := c.Values["rbac"].(map[string]any); ok && rbac["scope"] != nil {
		sets = append(sets, map[string]any{"rbac": map[string]any{"scope": "namespace"}})
	}
	seen := map[string]bool{}
	for _, vals := range sets {
		objs, err := renderChart(c, vals)
		if err != nil {
			r.add(ChartLint, "rendering with "+describeValues(vals)+": "+err.Error(), "", "")
			continue
		}
		before := len(r.Findings)
		checkRendered(r, objs, vals != nil)
		// Both renders usually find the same; keep each finding once.
		kept := r.Findings[:before]
		for _, f := range r.Findings[before:] {
			key := f.Check + "|" + f.Object + "|" + f.Message
			if !seen[key] {
				seen[key] = true
				kept = append(kept, f)
			}
		}
		r.Findings = kept
	}
	if crdsOnlyInCRDsDir(c) {
		r.add(CRDUpgrades, "the chart's CRDs are only in crds/, which helm upgrade never updates", "crds/", "")
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.File != "" && f.Line == 0 {
			f.Line = lineOfKind(filepath.Join(dir, filepath.FromSlash(f.File)), f.Object)
		}
	}
	return r, nil
}

func describeValues(v map[string]any) string {
	if v == nil {
		return "default values"
	}
	b, _ := yaml.Marshal(v)
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\n", " "))
}

// renderChart renders c for a release "opctl-validate" in namespace
// "validate" with extra values.
func renderChart(c *chart.Chart, vals map[string]any) ([]rendered, error) {
	values, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{Name: "opctl-validate", Namespace: "validate", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(c, values)
	if err != nil {
		return nil, err
	}
	var objs []rendered
	for _, name := range sortedKeys(out) {
		if !strings.HasSuffix(name, ".yaml") && !strings.HasSuffix(name, ".yml") {
			continue
		}
		template := strings.TrimPrefix(name, c.Name()+"/")
		for _, doc := range strings.Split(out[name], "\n---") {
			m := map[string]any{}
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				return nil, fmt.Errorf("%s renders invalid YAML: %w", template, err)
			}
			if len(m) > 0 {
				objs = append(objs, rendered{obj: &unstructured.Unstructured{Object: m}, template: template})
			}
		}
	}
	return objs, nil
}

// checkRendered runs the workload and RBAC checks on rendered objects.
func checkRendered(r *Report, objs []rendered, namespaceScope bool) {
	var pdbs []policyv1.PodDisruptionBudget
	for _, o := range objs {
		if o.obj.GetKind() == "PodDisruptionBudget" {
			var pdb policyv1.PodDisruptionBudget
			if runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, &pdb) == nil {
				pdbs = append(pdbs, pdb)
			}
		}
	}
	for _, o := range objs {
		id := o.obj.GetKind() + "/" + o.obj.GetName()
		switch o.obj.GetKind() {
		case "Role", "ClusterRole":
			var role rbacv1.ClusterRole
			if runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, &role) != nil {
				continue
			}
			for _, rule := range role.Rules {
				if slices.Contains(rule.Verbs, "*") || slices.Contains(rule.Resources, "*") || slices.Contains(rule.APIGroups, "*") {
					r.add(RBACWildcards, fmt.Sprintf("rule %v on %v/%v uses a wildcard", rule.Verbs, rule.APIGroups, rule.Resources), o.template, id)
				}
			}
		case "ClusterRoleBinding":
			if namespaceScope {
				ref, _, _ := unstructured.NestedString(o.obj.Object, "roleRef", "name")
				r.add(ClusterRBAC, fmt.Sprintf("with rbac.scope=namespace the chart still binds ClusterRole %s cluster-wide", ref), o.template, id)
			}
		}
		spec, replicas, job, ok := podSpecOf(o.obj)
		if !ok {
			continue
		}
		checkPod(r, spec, job, o.template, id)
		if replicas > 1 && !coveredByPDB(pdbs, o.obj) {
			r.add(DisruptionBudget, fmt.Sprintf("%d replicas and no PodDisruptionBudget selects them", replicas), o.template, id)
		}
	}
}

// podSpecOf returns the pod template of a workload, its replicas and
// whether it runs to completion.
func podSpecOf(o *unstructured.Unstructured) (*corev1.PodSpec, int32, bool, bool) {
	conv := func(into any) bool {
		return runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into) == nil
	}
	switch o.GetKind() {
	case "Deployment":
		var d appsv1.Deployment
		if conv(&d) {
			return &d.Spec.Template.Spec, replicasOf(d.Spec.Replicas), false, true
		}
	case "StatefulSet":
		var s appsv1.StatefulSet
		if conv(&s) {
			return &s.Spec.Template.Spec, replicasOf(s.Spec.Replicas), false, true
		}
	case "DaemonSet":
		var d appsv1.DaemonSet
		if conv(&d) {
			return &d.Spec.Template.Spec, 2, false, true
		}
	case "Job":
		var j batchv1.Job
		if conv(&j) {
			return &j.Spec.Template.Spec, 1, true, true
		}
	case "CronJob":
		var cj batchv1.CronJob
		if conv(&cj) {
			return &cj.Spec.JobTemplate.Spec.Template.Spec, 1, true, true
		}
	case "Pod":
		var p corev1.Pod
		if conv(&p) {
			return &p.Spec, 1, false, true
		}
	}
	return nil, 0, false, false
}

func replicasOf(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// checkPod runs the container checks on a pod spec.
func checkPod(r *Report, spec *corev1.PodSpec, job bool, file, id string) {
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		r.add(HostIsolation, "the pod uses a host namespace (hostNetwork, hostPID or hostIPC)", file, id)
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			r.add(HostIsolation, "volume "+v.Name+" is a hostPath", file, id)
		}
	}
	podNonRoot := spec.SecurityContext != nil && spec.SecurityContext.RunAsNonRoot != nil && *spec.SecurityContext.RunAsNonRoot
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		where := "container " + c.Name
		if !job && slices.ContainsFunc(spec.Containers, func(x corev1.Container) bool { return x.Name == c.Name }) &&
			(c.LivenessProbe == nil || c.ReadinessProbe == nil) {
			r.add(Probes, where+" lacks a liveness or readiness probe", file, id)
		}
		var missing []string
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := c.Resources.Requests[res]; !ok {
				missing = append(missing, "requests."+string(res))
			}
			if _, ok := c.Resources.Limits[res]; !ok {
				missing = append(missing, "limits."+string(res))
			}
		}
		if len(missing) > 0 {
			r.add(ResourceBounds, where+" has no "+strings.Join(missing, ", "), file, id)
		}
		if msg := securityGaps(c.SecurityContext, podNonRoot); msg != "" {
			r.add(RestrictedSecurity, where+": "+msg, file, id)
		}
		if bad := unpinned(c.Image); bad != "" {
			r.add(PinnedImages, where+" image "+c.Image+" "+bad, file, id)
		}
	}
}

func securityGaps(sc *corev1.SecurityContext, podNonRoot bool) string {
	var gaps []string
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	if !podNonRoot && (sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot) {
		gaps = append(gaps, "runAsNonRoot is not true")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		gaps = append(gaps, "readOnlyRootFilesystem is not true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		gaps = append(gaps, "allowPrivilegeEscalation is not false")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		gaps = append(gaps, "capabilities do not drop ALL")
	}
	return strings.Join(gaps, ", ")
}

// unpinned explains why an image is not pinned, or returns "".
func unpinned(image string) string {
	if strings.Contains(image, "@sha256:") {
		return ""
	}
	name := image[strings.LastIndex(image, "/")+1:]
	_, tag, ok := strings.Cut(name, ":")
	switch {
	case !ok:
		return "has no tag"
	case tag == "latest":
		return "uses the latest tag"
	}
	return ""
}

// coveredByPDB reports whether a PDB in the same namespace selects the
// workload's pods.
func coveredByPDB(pdbs []policyv1.PodDisruptionBudget, o *unstructured.Unstructured) bool {
	podLabels, _, _ := unstructured.NestedStringMap(o.Object, "spec", "template", "metadata", "labels")
	for _, p := range pdbs {
		if p.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err == nil && sel.Matches(labels.Set(podLabels)) {
			return true
		}
	}
	return false
}

// crdsOnlyInCRDsDir reports a chart whose CRDs are only in crds/.
func crdsOnlyInCRDsDir(c *chart.Chart) bool {
	if len(c.CRDObjects()) == 0 {
		return false
	}
	for _, t := range c.Templates {
		if strings.Contains(string(t.Data), "kind: CustomResourceDefinition") {
			return false
		}
	}
	return true
}

// lineOfKind finds the line declaring object's kind in a template file.
func lineOfKind(path, object string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	kind, _, _ := strings.Cut(object, "/")
	for i, line := range strings.Split(string(b), "\n") {
		if kind != "" && strings.TrimSpace(line) == "kind: "+kind {
			return i + 1
		}
	}
	return 1
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
