package monitoring

import (
	"os"
	"strings"
	"testing"

	"opctl.dev/opctl/internal/promtest"
)

const (
	ruleFile      = "../../config/prometheus/prometheusrule.yaml"
	dashboardFile = "../../config/grafana/kvstore-dashboard.json"
)

func TestAlerts(t *testing.T) { promtest.Check(t, ruleFile, "testdata/kvstore-alerts.test.yaml") }

// Every alert links a runbook section that exists in docs/runbooks.md.
func TestRunbooks(t *testing.T) {
	doc, err := os.ReadFile("../../docs/runbooks.md")
	if err != nil {
		t.Fatal(err)
	}
	rule, err := os.ReadFile(ruleFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range promtest.Rules(t, ruleFile, t.TempDir()) {
		anchor := "runbooks#" + strings.ToLower(r.Alert)
		if !strings.Contains(string(rule), anchor+"\n") {
			t.Errorf("alert %s has no runbook_url ending %s", r.Alert, anchor)
		}
		if !strings.Contains(string(doc), "\n## "+r.Alert+"\n") {
			t.Errorf("docs/runbooks.md has no section for %s", r.Alert)
		}
	}
}
