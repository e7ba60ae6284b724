// Package promtest checks Prometheus alert rules with the real promtool,
// for the test packages of the projects' PrometheusRules.
package promtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcluster"
)

// Rule is one alerting rule.
type Rule struct {
	Alert string `json:"alert"`
	Expr  string `json:"expr"`
}

// Rules extracts the rule groups of the PrometheusRule in ruleFile into
// dir/rules.yaml, as promtool reads them, and returns its alerts.
func Rules(t testing.TB, ruleFile, dir string) []Rule {
	t.Helper()
	b, err := os.ReadFile(ruleFile)
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Spec struct {
			Groups []map[string]any `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &pr); err != nil {
		t.Fatalf("%s: %v", ruleFile, err)
	}
	out, err := yaml.Marshal(map[string]any{"groups": pr.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	var groups struct {
		Groups []struct {
			Rules []Rule `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(out, &groups); err != nil {
		t.Fatal(err)
	}
	var rules []Rule
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				rules = append(rules, r)
			}
		}
	}
	if len(rules) == 0 {
		t.Fatalf("%s has no alerts", ruleFile)
	}
	return rules
}

// Check runs promtool check rules on ruleFile's rules and promtool test
// rules with testFile (whose rule_files name rules.yaml), and requires
// every alert to be tested both firing and quiet.
func Check(t *testing.T, ruleFile, testFile string) {
	t.Helper()
	bin := testcluster.DebianProgram(t, "promtool", "prometheus")
	dir := t.TempDir()
	rules := Rules(t, ruleFile, dir)
	if out, err := exec.Command(bin, "check", "rules", filepath.Join(dir, "rules.yaml")).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	tests, err := os.ReadFile(testFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts.test.yaml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "test", "rules", filepath.Join(dir, "alerts.test.yaml")).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	t.Logf("promtool test rules:\n%s", out)

	var suite struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string           `json:"alertname"`
				ExpAlerts []map[string]any `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(tests, &suite); err != nil {
		t.Fatal(err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range suite.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	for _, r := range rules {
		if !fires[r.Alert] || !quiet[r.Alert] {
			t.Errorf("alert %s: tested firing %v, quiet %v; test both", r.Alert, fires[r.Alert], quiet[r.Alert])
		}
	}
}
