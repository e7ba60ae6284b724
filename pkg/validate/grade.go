package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Capability levels, as the capabilities annotation names them.
var levelNames = []string{"", "Basic Install", "Seamless Upgrades", "Full Lifecycle", "Deep Insights", "Auto Pilot"}

// Criterion statuses.
const (
	Met     = "met"
	Missing = "missing"
	// Unknown: the criterion cannot be judged from manifests alone.
	Unknown = "unknown"
)

// Criterion is one piece of the grade.
type Criterion struct {
	Level    int    `json:"level"`
	ID       string `json:"id"`
	Required bool   `json:"required"`
	Text     string `json:"text"`
	Status   string `json:"status"`
	// Evidence is where the decision came from: file and path.
	Evidence []string `json:"evidence,omitempty"`
}

// Grade is the Operator Capability Level the evidence supports.
type Grade struct {
	Level         int         `json:"level"`
	Name          string      `json:"name"`
	Declared      string      `json:"declared,omitempty"`
	DeclaredLevel int         `json:"declaredLevel,omitempty"`
	Criteria      []Criterion `json:"criteria"`
}

// gradeBundle grades the operator from its bundle: a level is reached when
// every required criterion of it and of the levels below is met.
func gradeBundle(b *manifests.Bundle, files map[string]string) *Grade {
	csvFile := files["ClusterServiceVersion/"+b.CSV.Name]
	e := evidence{csvFile: csvFile, files: files}
	for _, crd := range b.V1CRDs {
		e.scan(crd)
	}
	// What the bundle ships, not what its CSV names: a kind listed in
	// owned[].resources proves nothing.
	shipped := map[string][]string{}
	for _, o := range b.Objects {
		shipped[o.GetKind()] = append(shipped[o.GetKind()], files[o.GetKind()+"/"+o.GetName()])
	}
	spec := b.CSV.Spec
	deployments := spec.InstallStrategy.StrategySpec.DeploymentSpecs
	probes, limits := true, true
	for _, d := range deployments {
		for _, c := range d.Spec.Template.Spec.Containers {
			probes = probes && c.LivenessProbe != nil && c.ReadinessProbe != nil
			limits = limits && len(c.Resources.Limits) > 0 && len(c.Resources.Requests) > 0
		}
	}
	unlistedContainers, unlistedEnv, _ := unlistedImages(b.CSV)
	relatedImages := len(unlistedContainers)+len(unlistedEnv) == 0
	graph := spec.Replaces != "" || len(spec.Skips) > 0 || b.CSV.Annotations["olm.skipRange"] != ""
	c := []Criterion{
		e.field(1, "L1-spec", true, "custom resources configure the operand through spec", "spec", "*"),
		e.status(1, "L1-status", "custom resources report the application state in a status subresource"),
		e.field(1, "L1-conditions", false, "status carries conditions", "status", "conditions"),
		e.documented(1, "L1-docs", "every spec field is documented"),
		check(1, "L1-related-images", true, "the CSV lists every image in spec.relatedImages", relatedImages, csvFile+":spec.relatedImages"),
		e.field(1, "L1-image-override", false, "the operand image can be overridden (spec image field or RELATED_IMAGE_*)", "spec", "image"),
		e.field(2, "L2-operand-version", true, "the operand version is set in the custom resource", "spec", "version", "appVersion", "image"),
		e.field(2, "L2-status-version", true, "status reports the version that runs", "status", "currentVersion", "version", "appVersion"),
		check(2, "L2-upgrade-graph", false, "the CSV has an upgrade graph (replaces, skips or olm.skipRange)", graph, csvFile+":spec.replaces"),
		unknown(2, "L2-unsupported-version", "an unsupported operand version is refused in status (behaviour: cannot be judged statically)"),
		e.kind(3, "L3-backup", "backups are custom resources (a Backup kind)", "backup"),
		e.fieldLike(3, "L3-restore", "a custom resource restores from a backup (a restore or recovery field)", "restore", "recovery", "frombackup"),
		e.field(3, "L3-scaling", true, "the operand scales through the custom resource", "spec", "replicas", "size", "members"),
		check(3, "L3-pdb", false, "the operator manages PodDisruptionBudgets", managesPDBs(b), csvFile+":spec.customresourcedefinitions.owned[].resources"),
		check(3, "L3-probes-limits", false, "the operator's containers have probes, requests and limits", probes && limits, csvFile+":spec.install.spec.deployments"),
		ships(4, "L4-metrics", "metrics are scraped: the bundle ships a ServiceMonitor", shipped, "ServiceMonitor"),
		ships(4, "L4-alerts", "alerts ship as PrometheusRules", shipped, "PrometheusRule"),
		operandAlerts(4, "L4-operand-metrics", b, files),
		e.autoscaling(5, "L5-autoscaling", "the operand autoscales: the scale subresource, or spec.autoscaling with minimum and maximum", shipped),
		e.fieldLike(5, "L5-tuning", "the operand is tuned: a tuning field", "tuning", "autotune"),
		unknown(5, "L5-auto-healing", "the operator heals and tunes the operand from its metrics (behaviour: cannot be judged statically)"),
	}
	g := &Grade{Criteria: c}
	for level := 1; level <= 5; level++ {
		if slices.ContainsFunc(c, func(x Criterion) bool { return x.Level == level && x.Required && x.Status != Met }) {
			break
		}
		g.Level = level
	}
	g.Name = levelNames[g.Level]
	if d := b.CSV.Annotations["capabilities"]; d != "" {
		g.Declared = d
		g.DeclaredLevel = slices.Index(levelNames, d)
	}
	return g
}

func check(level int, id string, required bool, text string, ok bool, where string) Criterion {
	c := Criterion{Level: level, ID: id, Required: required, Text: text, Status: Missing, Evidence: []string{where}}
	if ok {
		c.Status = Met
	}
	return c
}

func unknown(level int, id, text string) Criterion {
	return Criterion{Level: level, ID: id, Text: text, Status: Unknown}
}

// evidence indexes the CRD schemas of a bundle.
type evidence struct {
	csvFile string
	files   map[string]string
	// paths maps "spec.version" and the like to where they were found.
	paths map[string][]string
	kinds []string
	// undocumented spec fields and status subresources by CRD.
	undocumented []string
	noStatus     []string
	// scale lists the CRD versions with a scale subresource.
	scale []string
}

func (e *evidence) scan(crd *apiextensionsv1.CustomResourceDefinition) {
	if e.paths == nil {
		e.paths = map[string][]string{}
	}
	e.kinds = append(e.kinds, crd.Spec.Names.Kind)
	file := e.files["CustomResourceDefinition/"+crd.Name]
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		if v.Subresources == nil || v.Subresources.Status == nil {
			e.noStatus = append(e.noStatus, crd.Name+"/"+v.Name)
		}
		if v.Subresources != nil && v.Subresources.Scale != nil {
			e.scale = append(e.scale, fmt.Sprintf("%s:%s.versions[%s].subresources.scale", file, crd.Name, v.Name))
		}
		for _, top := range []string{"spec", "status"} {
			p, ok := v.Schema.OpenAPIV3Schema.Properties[top]
			if !ok {
				continue
			}
			for _, name := range sortedKeys(p.Properties) {
				f := p.Properties[name]
				where := fmt.Sprintf("%s:%s.versions[%s].%s.%s", file, crd.Name, v.Name, top, name)
				e.paths[top+"."+name] = append(e.paths[top+"."+name], where)
				e.paths[top+".*"] = append(e.paths[top+".*"], where)
				if top == "spec" && f.Description == "" {
					e.undocumented = append(e.undocumented, where)
				}
				for _, sub := range sortedKeys(f.Properties) {
					e.paths[top+"."+name+"."+sub] = append(e.paths[top+"."+name+"."+sub], where+"."+sub)
				}
			}
		}
	}
}

// field is met when any CRD has top.<one of names> ("*" for any field).
func (e *evidence) field(level int, id string, required bool, text, top string, names ...string) Criterion {
	c := Criterion{Level: level, ID: id, Required: required, Text: text, Status: Missing}
	for _, n := range names {
		c.Evidence = append(c.Evidence, e.paths[top+"."+n]...)
	}
	if len(c.Evidence) > 0 {
		c.Status = Met
		c.Evidence = c.Evidence[:1]
	} else {
		c.Evidence = []string{"no CRD has " + top + "." + strings.Join(names, " or ")}
	}
	return c
}

func (e *evidence) status(level int, id, text string) Criterion {
	c := e.field(level, id, true, text, "status", "*")
	if len(e.noStatus) > 0 {
		c.Status, c.Evidence = Missing, []string{"no status subresource: " + strings.Join(e.noStatus, ", ")}
	}
	return c
}

func (e *evidence) documented(level int, id, text string) Criterion {
	c := Criterion{Level: level, ID: id, Required: true, Text: text, Status: Met, Evidence: []string{"descriptions on every spec field"}}
	if len(e.undocumented) > 0 {
		slices.Sort(e.undocumented)
		c.Status, c.Evidence = Missing, e.undocumented
	}
	return c
}

// managesPDBs reports whether an owned CRD lists PodDisruptionBudgets
// among the resources it manages.
func managesPDBs(b *manifests.Bundle) bool {
	for _, o := range b.CSV.Spec.CustomResourceDefinitions.Owned {
		for _, r := range o.Resources {
			if r.Kind == "PodDisruptionBudget" {
				return true
			}
		}
	}
	return false
}
