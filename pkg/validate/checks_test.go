package validate

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every registered check fires on some fixture, at its registered severity
// unless it relays another tool's, so no check is dead or mistyped.
func TestEveryCheckFires(t *testing.T) {
	csvFile := func(dir string) string {
		return filepath.Join(dir, "manifests", "sample-operator.clusterserviceversion.yaml")
	}
	fixtures := []struct {
		name  string
		path  func(t *testing.T) string
		suite string
	}{
		{"broken bundle", brokenBundle, SuiteOperatorHub},
		{"owned CRD without resources", func(t *testing.T) string {
			dir := copyDir(t, sampleBundle)
			editFile(t, csvFile(dir), "      resources:\n      - kind: StatefulSet\n", "      xresources:\n      - kind: StatefulSet\n")
			return dir
		}, ""},
		{"oversized bundle", func(t *testing.T) string {
			dir := copyDir(t, sampleBundle)
			big := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: " + strings.Repeat("x", MaxBundleBytes) + "\n"
			if err := os.WriteFile(filepath.Join(dir, "manifests", "big.configmap.yaml"), []byte(big), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, ""},
		{"overclaimed capabilities", func(t *testing.T) string {
			dir := copyDir(t, level2Bundle)
			editFile(t, csvFile(dir), "capabilities: Seamless Upgrades", "capabilities: Deep Insights")
			return dir
		}, ""},
		{"placeholder image", func(t *testing.T) string {
			dir := copyDir(t, sampleBundle)
			editFile(t, csvFile(dir), "image: opctl/kvstore-operator:0.1.0", "image: ${REGISTRY}/kvstore-operator:0.1.0")
			return dir
		}, ""},
		{"bundle owning an APIService", func(*testing.T) string { return "../packaging/testdata/golden/aggregated/bundle/agg-operator" }, ""},
		{"bad chart", func(*testing.T) string { return "testdata/badchart" }, ""},
		{"sample chart", func(*testing.T) string { return sampleChart }, ""},
		{"chart of a manager that watches every namespace", func(*testing.T) string { return "../packaging/testdata/golden/allns/charts/allns" }, ""},
		{"chart that does not lint", func(t *testing.T) string {
			dir := copyDir(t, sampleChart)
			if err := os.WriteFile(filepath.Join(dir, "templates", "broken.yaml"), []byte("kind: {{ .Values.nope.deeper }}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, ""},
		{"bad catalog", func(*testing.T) string { return "testdata/catalog/bad" }, ""},
	}
	fired := map[string]bool{}
	for _, fx := range fixtures {
		reports, err := Validate(context.Background(), fx.path(t), KindAuto, Options{Suite: fx.suite})
		if err != nil {
			t.Fatalf("%s: %v", fx.name, err)
		}
		for _, r := range reports {
			for _, f := range r.Findings {
				c, err := registered(f)
				if err != nil {
					t.Errorf("%s: %v", fx.name, err)
					continue
				}
				if f.Severity == c.Severity {
					fired[c.ID] = true
				}
			}
		}
	}
	for _, c := range Checks {
		if !fired[c.ID] {
			t.Errorf("%s (%s) fired on no fixture", c.ID, c.Severity)
		}
	}
}

// registered returns the check of f, or an error when f names no
// registered check or is not at its severity (relayed checks excepted).
func registered(f Finding) (*Check, error) {
	c, ok := CheckByID(f.Check)
	if !ok {
		return nil, fmt.Errorf("finding of an unregistered check: %+v", f)
	}
	if f.Severity != c.Severity && !c.Relayed {
		return nil, fmt.Errorf("%s at %s, registered at %s", f.Check, f.Severity, c.Severity)
	}
	return c, nil
}

// Every check names the kind of input it reads and carries its function;
// the registry runs (and docs/checks.md lists) them by kind, then ID.
func TestCheckRegistry(t *testing.T) {
	kinds := []string{KindBundle, KindCatalog, KindChart}
	for i, c := range Checks {
		if !slices.Contains(kinds, c.Kind) || c.run == nil {
			t.Errorf("%s: kind %q, function set %t", c.ID, c.Kind, c.run != nil)
		}
		if i > 0 && cmp.Or(cmp.Compare(Checks[i-1].Kind, c.Kind), cmp.Compare(Checks[i-1].ID, c.ID)) >= 0 {
			t.Errorf("%s comes after %s", c.ID, Checks[i-1].ID)
		}
	}
	if len(Checks) == 0 {
		t.Error("no check registered")
	}
}
