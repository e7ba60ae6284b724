package alerts

import (
	"os"
	"regexp"
	"testing"

	"opctl.dev/opctl/internal/promtest"
)

const (
	ruleFile = "../../config/prometheus/prometheusrule.yaml"
	testFile = "testdata/tenancy-alerts.test.yaml"
)

func TestAlerts(t *testing.T) { promtest.Check(t, ruleFile, testFile) }

// The chart ships the same alert expressions as config/prometheus.
func TestChartCarriesTheRules(t *testing.T) {
	b, err := os.ReadFile("../../charts/opctl/templates/prometheusrule-tenancy-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range promtest.Rules(t, ruleFile, t.TempDir()) {
		if !regexp.MustCompile(`alert: ` + regexp.QuoteMeta(r.Alert) + `\n`).Match(b) {
			t.Errorf("charts/opctl lacks alert %s: run make generate", r.Alert)
		}
	}
}
