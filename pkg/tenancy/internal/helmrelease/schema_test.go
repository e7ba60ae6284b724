package helmrelease

import (
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

// TestValuesMeetSchema: Helm's schema validation is skipped only where
// Helm's own would pass, and is left to Helm everywhere else.
func TestValuesMeetSchema(t *testing.T) {
	sample, err := loader.Load("../../../../charts/sample-operator")
	if err != nil {
		t.Fatal(err)
	}
	withSchema := func(schema string) *chart.Chart {
		return &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "c", Version: "1.0.0"}, Schema: []byte(schema),
			Values: map[string]any{"replicas": 1}}
	}
	withDeps := withSchema(`{"type": "object"}`)
	withDeps.Metadata.Dependencies = []*chart.Dependency{{Name: "sub"}}
	for _, tc := range []struct {
		name  string
		chart *chart.Chart
		vals  map[string]any
		skip  bool
	}{
		{"sample chart, its values", sample, map[string]any{"replicas": 2}, true},
		{"sample chart, an unknown value", sample, map[string]any{"nope": true}, false},
		{"sample chart, a wrong type", sample, map[string]any{"replicas": "two"}, false},
		{"no schema", withSchema(""), map[string]any{"anything": 1}, true},
		{"a remote $ref", withSchema(`{"$ref": "https://example.invalid/s.json"}`), map[string]any{}, false},
		{"a schema that is not JSON", withSchema(`{`), map[string]any{}, false},
		{"dependencies", withDeps, map[string]any{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "no schema" {
				tc.chart.Schema = nil
			}
			if got := valuesMeetSchema(tc.chart, tc.vals); got != tc.skip {
				t.Fatalf("valuesMeetSchema = %v, want %v", got, tc.skip)
			}
			if !tc.skip {
				return
			}
			// Where it skips, Helm's validation passes.
			coalesced, err := chartutil.CoalesceValues(tc.chart, tc.vals)
			if err != nil {
				t.Fatal(err)
			}
			if err := chartutil.ValidateAgainstSchema(tc.chart, coalesced); err != nil {
				t.Errorf("skipped, but Helm's validation fails: %v", err)
			}
		})
	}
}
