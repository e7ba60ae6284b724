package tenancy_test

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/yaml"
)

// monitoredExprs are the PromQL expressions of the controller's alerts and
// dashboard, as config/ ships them.
func monitoredExprs(t *testing.T) []string {
	t.Helper()
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct{ Expr string }
			}
		}
	}
	b, err := os.ReadFile("../../config/prometheus/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &rule); err != nil {
		t.Fatal(err)
	}
	var exprs []string
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	var dash struct {
		Panels []struct {
			Targets []struct{ Expr string }
		}
	}
	if b, err = os.ReadFile("../../config/grafana/tenancy-dashboard.json"); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	return exprs
}

var (
	promKeywords = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "offset", "bool"}
	// Aggregations may put by/without between their name and parentheses.
	promAggregations = []string{"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile"}
	labelName        = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)`)
)

// selectors returns the metric names an expression selects, each with the
// label names its matchers use.
func selectors(expr string) map[string][]string {
	out := map[string][]string{}
	ident := func(c byte) bool {
		return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	skipString := func(i int) int { // i at a quote; returns the index after the closing one
		q := expr[i]
		for i++; i < len(expr) && expr[i] != q; i++ {
			if expr[i] == '\\' {
				i++
			}
		}
		return i + 1
	}
	skipTo := func(i int, open, close byte) int { // i at open; returns the index after the matching close
		depth := 0
		for i < len(expr) {
			switch expr[i] {
			case '"', '\'':
				i = skipString(i)
				continue
			case open:
				depth++
			case close:
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '[':
			i = skipTo(i, '[', ']')
		case c == '"' || c == '\'':
			i = skipString(i)
		case ident(c) && !(c >= '0' && c <= '9'):
			j := i
			for j < len(expr) && ident(expr[j]) {
				j++
			}
			word := expr[i:j]
			k := j
			for k < len(expr) && expr[k] == ' ' {
				k++
			}
			switch {
			case slices.Contains(promKeywords, word):
				if k < len(expr) && expr[k] == '(' {
					k = skipTo(k, '(', ')')
				}
				i = k
			case k < len(expr) && expr[k] == '(', slices.Contains(promAggregations, word): // a function or aggregation
				i = k
			default:
				labels := []string{}
				if k < len(expr) && expr[k] == '{' {
					end := skipTo(k, '{', '}')
					for _, m := range labelName.FindAllStringSubmatch(stripStrings(expr[k:end]), -1) {
						labels = append(labels, m[1])
					}
					k = end
				}
				out[word] = append(out[word], labels...)
				i = k
			}
		case c >= '0' && c <= '9':
			for i < len(expr) && (ident(expr[i]) || expr[i] == '.') {
				i++
			}
		default:
			i++
		}
	}
	return out
}

// quoted matches a PromQL string literal.
var quoted = regexp.MustCompile(`"(\\.|[^"\\])*"|'(\\.|[^'\\])*'`)

// stripStrings blanks quoted strings so matcher values never look like
// label names.
func stripStrings(s string) string { return quoted.ReplaceAllString(s, `""`) }

// exposed parses a Prometheus text exposition into metric names and the
// label names each series carries.
func exposed(body string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, "{")
		name = strings.Fields(name)[0]
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		if labels, _, ok := strings.Cut(rest, "}"); ok {
			for _, m := range labelName.FindAllStringSubmatch(stripStrings(labels), -1) {
				out[name][m[1]] = true
			}
		}
	}
	return out
}

// checkMonitoredSeries fails for every metric, or label of one, that an
// alert or dashboard expression uses and body does not expose.
func checkMonitoredSeries(t *testing.T, body string) {
	t.Helper()
	have := exposed(body)
	for _, expr := range monitoredExprs(t) {
		for name, labels := range selectors(expr) {
			got, ok := have[name]
			if !ok {
				t.Errorf("%s (used by %q) is not exposed", name, expr)
				continue
			}
			for _, l := range labels {
				if !got[l] {
					t.Errorf("%s has no label %s (used by %q)", name, l, expr)
				}
			}
		}
	}
}

// The selector scanner finds exactly the metrics of real expressions, and
// nothing in by(), functions, ranges or strings.
func TestSelectors(t *testing.T) {
	cases := map[string]map[string][]string{
		`opctl_a{condition="Progressing",status="True"} > 0 unless on() (increase(opctl_b_total{operation=~"install|up"}[30m]) > 0)`: {
			"opctl_a": {"condition", "status"}, "opctl_b_total": {"operation"}},
		`histogram_quantile(0.9, sum by (le, operation) (rate(x_bucket[5m])))`: {"x_bucket": {}},
		`y{tenant=~"$tenant"}`:                        {"y": {"tenant"}},
		`sum by (result) (rate(z{a="b=c"}[5m])) * 60`: {"z": {"a"}},
	}
	for expr, want := range cases {
		got := selectors(expr)
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", expr, got, want)
			continue
		}
		for name, labels := range want {
			if !slices.Equal(got[name], labels) {
				t.Errorf("%s: %s labels %v, want %v", expr, name, got[name], labels)
			}
		}
	}
	if n := len(monitoredExprs(t)); n < 8 {
		t.Errorf("found %d alert and dashboard expressions; the files changed shape?", n)
	}
}

// releaseOps reads opctl_tenancy_release_operations_total{operation,
// result} and the sample count of the operation's duration histogram from
// this process's registry (controllers started by startController).
func releaseOps(t *testing.T, operation, result string) (count float64, timed uint64) {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	has := func(m *dto.Metric, name, value string) bool {
		return slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == name && l.GetValue() == value })
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch f.GetName() {
			case "opctl_tenancy_release_operations_total":
				if has(m, "operation", operation) && has(m, "result", result) {
					count = m.GetCounter().GetValue()
				}
			case "opctl_tenancy_release_operation_duration_seconds":
				if has(m, "operation", operation) {
					timed = m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return count, timed
}
