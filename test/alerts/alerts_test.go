package alerts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcluster"
)

const (
	ruleFile = "../../config/prometheus/prometheusrule.yaml"
	testFile = "testdata/tenancy-alerts.test.yaml"
)

// promtool finds promtool (Debian's prometheus package, which make test
// installs); without it the test skips only in unit mode.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv(testcluster.EnvSkip) == "1" {
			t.Skip("promtool not installed (make test-deps installs Debian's prometheus package)")
		}
		t.Fatalf("promtool not installed: run make test-deps: %v", err)
	}
	return p
}

// rules extracts the rule groups of the PrometheusRule into dir/rules.yaml
// and returns the alert names.
func rules(t *testing.T, dir string) []string {
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
	var names []string
	for _, g := range pr.Spec.Groups {
		rs, _ := g["rules"].([]any)
		for _, r := range rs {
			if a, ok := r.(map[string]any)["alert"].(string); ok {
				names = append(names, a)
			}
		}
	}
	return names
}

func TestAlerts(t *testing.T) {
	bin := promtool(t)
	dir := t.TempDir()
	alerts := rules(t, dir)
	if len(alerts) == 0 {
		t.Fatalf("%s has no alerts", ruleFile)
	}
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

	// Every alert is tested both firing and quiet.
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
	for _, a := range alerts {
		if !fires[a] || !quiet[a] {
			t.Errorf("alert %s: tested firing %v, quiet %v; test both", a, fires[a], quiet[a])
		}
	}
}

// The chart ships the same alert expressions as config/prometheus.
func TestChartCarriesTheRules(t *testing.T) {
	b, err := os.ReadFile("../../charts/opctl/templates/prometheusrule-tenancy-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, a := range rules(t, dir) {
		if !regexp.MustCompile(`alert: ` + regexp.QuoteMeta(a) + `\n`).Match(b) {
			t.Errorf("charts/opctl lacks alert %s: run make generate", a)
		}
	}
}
