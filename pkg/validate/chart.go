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
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/pkg/packaging/contract"
)

// rendered is one object of a rendered chart and the template it came from.
type rendered struct {
	obj      *unstructured.Unstructured
	template string
}

// chartInput is what chart checks read: the chart, and its renders with
// default values and, when the chart has rbac.scope, with
// rbac.scope=namespace.
type chartInput struct {
	dir     string
	chart   *chart.Chart
	renders []chartRender
	// standIns are values for what the chart requires the user to set
	// (standIns); every render and lint has them.
	standIns map[string]any
	// namespaces are the tenant's a bundle was rendered for; nil for a
	// chart, rendered in renderNamespace.
	namespaces []string
}

func (*chartInput) kind() string { return KindChart }

// chartRender is one render of the chart.
type chartRender struct {
	// vals are the values given, nil for the defaults; err says why the
	// render failed. namespace marks the render with rbac.scope=namespace.
	vals      map[string]any
	namespace bool
	err       error
	objs      []rendered
	// workloads are the objects that run pods; pdbs the
	// PodDisruptionBudgets.
	workloads []workload
	pdbs      []policyv1.PodDisruptionBudget
}

// namespaceScope reports the render with rbac.scope=namespace.
func (rd *chartRender) namespaceScope() bool { return rd.namespace }

// standInImage is the image validate renders for an image the chart
// requires (images.<name>, of a ko:// reference): pinned, so the image
// checks judge the chart, not the stand-in.
const standInImage = "registry.invalid/stand-in@sha256:0000000000000000000000000000000000000000000000000000000000000000"

// standIns are values for what the chart's Chart.yaml says it cannot
// render without (contract.RequiredValues: a project's placeholders
// without a default, its ko images, a converted CRD chart's
// conversion.release): the checks render with them, as a user must
// install with them; an image is a pinned stand-in, so the image checks
// judge the chart, not the stand-in.
func standIns(c *chart.Chart) map[string]any {
	if c.Metadata == nil {
		return map[string]any{}
	}
	return contract.StandIns(c.Metadata.Annotations[contract.RequiredValues], func(path string) any {
		if strings.HasPrefix(path, "images.") {
			return standInImage
		}
		return "stand-in"
	})
}

// workload is a rendered object that runs pods.
type workload struct {
	rendered
	// id is "Kind/name".
	id       string
	spec     *corev1.PodSpec
	replicas int32
	// job runs to completion.
	job bool
}

// ValidateChart checks the chart in dir. An error means dir is not a
// loadable chart.
func ValidateChart(dir string, opts Options) (*Report, error) {
	c, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("%s is not a loadable Helm chart: %w", dir, err)
	}
	in := &chartInput{dir: dir, chart: c, standIns: standIns(c)}
	sets := []map[string]any{nil}
	if rbac, ok := c.Values["rbac"].(map[string]any); ok && rbac["scope"] != nil {
		sets = append(sets, map[string]any{"rbac": map[string]any{"scope": "namespace"}})
	}
	for _, vals := range sets {
		all := maps.Clone(in.standIns)
		maps.Copy(all, vals)
		rd := newRender(c, all)
		rd.vals, rd.namespace = vals, vals != nil
		in.renders = append(in.renders, rd)
	}
	r := &Report{Path: dir, Kind: KindChart, Findings: []Finding{}}
	runChecks(r, in)
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.File != "" && f.Line == 0 {
			f.Line = lineOfKind(filepath.Join(dir, filepath.FromSlash(f.File)), f.Object)
		}
	}
	return r, nil
}

// newRender renders c with vals and finds its workloads and
// PodDisruptionBudgets.
func newRender(c *chart.Chart, vals map[string]any) chartRender {
	objs, err := renderChart(c, vals)
	if err != nil {
		return chartRender{vals: vals, err: err}
	}
	rd := renderOf(objs)
	rd.vals = vals
	return rd
}

// renderOf sorts rendered objects into a render: its workloads and
// PodDisruptionBudgets.
func renderOf(objs []rendered) chartRender {
	rd := chartRender{objs: objs}
	for _, o := range rd.objs {
		if o.obj.GetKind() == "PodDisruptionBudget" {
			var pdb policyv1.PodDisruptionBudget
			if runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj.Object, &pdb) == nil {
				rd.pdbs = append(rd.pdbs, pdb)
			}
		}
		if spec, replicas, job, ok := podSpecOf(o.obj); ok {
			rd.workloads = append(rd.workloads, workload{rendered: o, id: o.obj.GetKind() + "/" + o.obj.GetName(), spec: spec, replicas: replicas, job: job})
		}
	}
	return rd
}

// eachRender makes a chart check of check, which reads one render: it
// runs on every render that succeeded, and keeps each finding once, as
// both renders usually find the same.
func eachRender(check func(c *Check, r *Report, rd *chartRender)) func(*Check, *Report, *chartInput) {
	return func(c *Check, r *Report, in *chartInput) {
		seen := map[string]bool{}
		for i := range in.renders {
			if in.renders[i].err != nil {
				continue
			}
			before := len(r.Findings)
			check(c, r, &in.renders[i])
			kept := r.Findings[:before]
			for _, f := range r.Findings[before:] {
				key := f.Object + "|" + f.Message
				if !seen[key] {
					seen[key] = true
					kept = append(kept, f)
				}
			}
			r.Findings = kept
		}
	}
}

// eachContainer makes a chart check of check, which reads one container
// of a workload (init containers first).
func eachContainer(check func(c *Check, r *Report, w workload, ctr corev1.Container)) func(*Check, *Report, *chartInput) {
	return eachRender(func(c *Check, r *Report, rd *chartRender) {
		for _, w := range rd.workloads {
			for _, ctr := range slices.Concat(w.spec.InitContainers, w.spec.Containers) {
				check(c, r, w, ctr)
			}
		}
	})
}

func describeValues(v map[string]any) string {
	if v == nil {
		return "default values"
	}
	b, _ := yaml.Marshal(v)
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\n", " "))
}

// renderNamespace is the release namespace of every render.
const renderNamespace = "validate"

// renderChart renders c for a release "opctl-validate" in namespace
// renderNamespace with extra values.
func renderChart(c *chart.Chart, vals map[string]any) ([]rendered, error) {
	values, err := chartutil.ToRenderValues(c, vals, chartutil.ReleaseOptions{Name: "opctl-validate", Namespace: renderNamespace, IsInstall: true}, chartutil.DefaultCapabilities)
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
