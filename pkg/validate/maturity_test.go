package validate

import (
	"context"
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
