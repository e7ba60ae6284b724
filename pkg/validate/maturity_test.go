package validate

import (
	"context"
	"strings"
	"testing"
)

func guideline(gs []Guideline, name string) Guideline {
	for _, g := range gs {
		if g.Name == name {
			return g
		}
	}
	return Guideline{}
}

func TestMaturitySample(t *testing.T) {
	r, err := ValidateBundle(sampleBundle, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"declarative custom resource API":                      Pass,
		"platform-as-code annotations on CRDs":                 Pass,
		"controllers are namespace aware":                      Pass,
		"taint tolerations":                                    Pass,
		"naming conventions and labels documented":             Unknown,
		"ownerReferences on owned resources":                   Unknown,
		"packaged as a Helm chart":                             Unknown,
		"crd-install Helm hook":                                NotApplicable,
		"spec validation rules in the CRD schema":              Pass,
		"kubectl as the primary interaction (printer columns)": Pass,
	} {
		g := guideline(r.Maturity, name)
		if g.Status != want {
			t.Errorf("%q = %q, want %q (%v)", name, g.Status, want, g.Evidence)
		}
		if g.Status == Pass && len(g.Evidence) == 0 {
			t.Errorf("%q passes without evidence", name)
		}
	}
	// The legacy fixture has no platform-as-code annotations or printer columns.
	legacy, err := ValidateBundle("../packaging/testdata/golden/legacy/bundle/legacy-operator", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"platform-as-code annotations on CRDs", "kubectl as the primary interaction (printer columns)", "taint tolerations"} {
		if g := guideline(legacy.Maturity, name); g.Status != Fail {
			t.Errorf("legacy %q = %q, want fail", name, g.Status)
		}
	}
}

// With the project, the chart is known and the Helm guidelines are judged.
func TestMaturityOfAProjectJudgesTheChart(t *testing.T) {
	rs, err := Validate(context.Background(), "../../operators/sample", KindProject, Options{})
	if err != nil {
		t.Fatal(err)
	}
	bundle := rs[1]
	for _, name := range []string{"packaged as a Helm chart", "CRDs registered as YAML in the Helm chart", "operator configurables through Helm values or a ConfigMap"} {
		if g := guideline(bundle.Maturity, name); g.Status != Pass {
			t.Errorf("%q = %q, want pass", name, g.Status)
		}
	}
}

// "controllers are namespace aware" follows what opctl package found in
// the manager's code, when the CSV says it.
func TestNamespaceAwareFromTheCode(t *testing.T) {
	for _, tt := range []struct {
		fixture, bundle, want string
	}{
		{"allns", "allns", Fail},       // the go/v4 scaffold reads no namespace
		{"watchenv", "watchenv", Pass}, // WATCH_NAMESPACE outside cmd/
		{"nsflag", "nsflag", Pass},     // --namespace into the cache
		{"legacy", "legacy-operator", Unknown},
	} {
		r, err := ValidateBundle("../packaging/testdata/golden/"+tt.fixture+"/bundle/"+tt.bundle, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if g := guideline(r.Maturity, "controllers are namespace aware"); g.Status != tt.want || len(g.Evidence) == 0 || !strings.Contains(g.Evidence[0], "opctl.dev/watch-namespace") {
			t.Errorf("%s: %q %v, want %q with the annotation as evidence", tt.fixture, g.Status, g.Evidence, tt.want)
		}
	}
	for _, tt := range []struct {
		name       string
		ann        map[string]string
		own        bool
		watch      string
		want       string
		evidenceOf string
	}{
		{"read, namespaced mode", map[string]string{"opctl.dev/watch-namespace": "env:WATCH_NAMESPACE"}, true, "", Pass, "env:WATCH_NAMESPACE"},
		{"read, AllNamespaces only", map[string]string{"opctl.dev/watch-namespace": "flag:--namespace"}, false, "x", Fail, "no OwnNamespace"},
		{"none despite a WATCH_NAMESPACE variable", map[string]string{"opctl.dev/watch-namespace": "none"}, true, "x", Fail, "watches every namespace"},
		{"no annotation: the variable and the mode", nil, true, "csv:env", Pass, "csv:env"},
		{"no annotation, no variable", nil, true, "", Fail, "no WATCH_NAMESPACE"},
	} {
		g := judgeNamespaceAware(tt.ann, "csv", tt.own, tt.watch)
		if g.Status != tt.want || !strings.Contains(strings.Join(g.Evidence, " "), tt.evidenceOf) {
			t.Errorf("%s: %q %v, want %q naming %q", tt.name, g.Status, g.Evidence, tt.want, tt.evidenceOf)
		}
	}
}
