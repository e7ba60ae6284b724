package validate

import (
	"fmt"
	"opctl.dev/opctl/internal/lazyre"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/manifests"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ships is met when the bundle ships an object of kind.
func ships(level int, id, text string, shipped map[string][]string, kind string) Criterion {
	c := Criterion{Level: level, ID: id, Required: true, Text: text, Status: Missing, Evidence: []string{"the bundle ships no " + kind}}
	if files := shipped[kind]; len(files) > 0 {
		c.Status, c.Evidence = Met, files[:1]
	}
	return c
}

// kind is met when a CRD's kind contains word (Backup in KVBackup).
func (e *evidence) kind(level int, id, text, word string) Criterion {
	c := Criterion{Level: level, ID: id, Required: true, Text: text, Status: Missing, Evidence: []string{"no CRD kind contains " + word}}
	for _, k := range e.kinds {
		if strings.Contains(strings.ToLower(k), word) {
			c.Status, c.Evidence = Met, []string{"kind " + k}
		}
	}
	return c
}

// fieldLike is met when a spec field, top-level or one below, has a name
// containing one of words (restoreFrom, bootstrap.recovery).
func (e *evidence) fieldLike(level int, id, text string, words ...string) Criterion {
	c := Criterion{Level: level, ID: id, Required: true, Text: text, Status: Missing,
		Evidence: []string{"no spec field named like " + strings.Join(words, ", ")}}
	for _, path := range sortedKeys(e.paths) {
		last := strings.ToLower(path[strings.LastIndex(path, ".")+1:])
		if !strings.HasPrefix(path, "spec.") || !slices.ContainsFunc(words, func(w string) bool { return strings.Contains(last, w) }) {
			continue
		}
		c.Status, c.Evidence = Met, e.paths[path][:1]
		return c
	}
	return c
}

// autoscaling is met by a CRD's scale subresource, a shipped
// HorizontalPodAutoscaler, or spec.autoscaling with a minimum and a
// maximum: a field merely named autoscaling is not enough.
func (e *evidence) autoscaling(level int, id, text string, shipped map[string][]string) Criterion {
	c := Criterion{Level: level, ID: id, Required: true, Text: text, Status: Missing,
		Evidence: []string{"no scale subresource, HorizontalPodAutoscaler, or spec.autoscaling with min and max fields"}}
	var minMax []string
	for _, path := range sortedKeys(e.paths) {
		if rest, ok := strings.CutPrefix(strings.ToLower(path), "spec.autoscaling."); ok && (strings.HasPrefix(rest, "min") || strings.HasPrefix(rest, "max")) {
			minMax = append(minMax, e.paths[path][0])
		}
	}
	switch {
	case len(e.scale) > 0:
		c.Status, c.Evidence = Met, e.scale[:1]
	case len(shipped["HorizontalPodAutoscaler"]) > 0:
		c.Status, c.Evidence = Met, shipped["HorizontalPodAutoscaler"][:1]
	case len(minMax) >= 2:
		c.Status, c.Evidence = Met, minMax[:2]
	}
	return c
}

// The operator's own metrics, by prefix: an alert only on these watches
// the operator, not the operand.
var operatorMetricPrefixes = []string{"controller_runtime_", "workqueue_", "rest_client_", "go_", "process_", "leader_election_", "operatorkit_", "certwatcher_", "promhttp_"}

var (
	// braces and grouping hold label names, not metric names.
	promqlLabels = lazyre.New(`\{[^}]*\}|\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	// a metric name with an underscore that is not called like a function.
	promqlMetric = lazyre.New(`[a-zA-Z_:][a-zA-Z0-9_:]*_[a-zA-Z0-9_:]*\b(?:\s*\()?`)
)

// operandAlerts is met when a shipped PrometheusRule alerts on a metric
// that is not the operator's own: evidence that the operand is measured.
func operandAlerts(level int, id string, b *manifests.Bundle, files map[string]string) Criterion {
	c := Criterion{Level: level, ID: id, Required: true, Text: "alerts watch the operand's metrics, not only the operator's", Status: Missing,
		Evidence: []string{"no PrometheusRule expression uses a metric of the operand"}}
	for _, o := range b.Objects {
		if o.GetKind() != "PrometheusRule" {
			continue
		}
		groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "groups")
		for _, g := range groups {
			rules, _, _ := unstructured.NestedSlice(asMap(g), "rules")
			for _, r := range rules {
				expr := fmt.Sprint(asMap(r)["expr"])
				if m := operandMetric(expr); m != "" {
					c.Status = Met
					c.Evidence = []string{fmt.Sprintf("%s: alert %v uses %s", files[o.GetKind()+"/"+o.GetName()], asMap(r)["alert"], m)}
					return c
				}
			}
		}
	}
	return c
}

// operandMetric returns a metric of expr that is not the operator's own.
func operandMetric(expr string) string {
	for _, m := range promqlMetric().FindAllString(promqlLabels().ReplaceAllString(expr, " "), -1) {
		if strings.HasSuffix(strings.TrimSpace(m), "(") {
			continue // a function
		}
		if !slices.ContainsFunc(operatorMetricPrefixes, func(p string) bool { return strings.HasPrefix(m, p) }) {
			return m
		}
	}
	return ""
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
