package validate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func reportsOf(t *testing.T, paths ...string) []*Report {
	t.Helper()
	var out []*Report
	for _, p := range paths {
		rs, err := Validate(t.Context(), p, KindAuto, Options{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rs...)
	}
	return out
}

// The SARIF output validates against the SARIF 2.1.0 schema, as GitHub
// code scanning requires.
func TestSARIFValidatesAgainstTheSchema(t *testing.T) {
	f, err := os.Open("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("sarif-schema-2.1.0.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, reportsOf(t, "testdata/badchart", sampleBundle, sampleChart), "test"); err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Errorf("SARIF output is invalid: %v", err)
	}
	// A broken document must fail, so the check above has teeth.
	var broken map[string]any
	_ = json.Unmarshal(buf.Bytes(), &broken)
	broken["version"] = "9.9"
	if err := schema.Validate(broken); err == nil {
		t.Error("the schema accepted version 9.9")
	}
	var log sarifLog
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range log.Runs[0].Results {
		loc := r.Locations[0].PhysicalLocation
		if r.RuleID == "OPC-C007" && loc.ArtifactLocation.URI == "testdata/badchart/templates/rbac.yaml" && loc.Region != nil && loc.Region.StartLine == 2 {
			found = true
		}
	}
	if !found {
		t.Errorf("no OPC-C007 result located at testdata/badchart/templates/rbac.yaml:2")
	}
}

func TestJUnit(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, reportsOf(t, "testdata/badchart", sampleBundle)); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	suites := map[string]junitSuite{}
	for _, s := range doc.Suites {
		suites[s.Name] = s
	}
	web := suites["testdata/badchart/templates/web.yaml"]
	if web.Failures == 0 || web.Tests < web.Failures {
		t.Errorf("web.yaml suite %+v", web)
	}
	if s, ok := suites[sampleBundle+"/manifests/sample-operator.clusterserviceversion.yaml"]; !ok || s.Failures != 0 || s.Tests == 0 {
		t.Errorf("clean bundle suite %+v (suites %v)", s, sortedKeys(suites))
	}
	if doc.Failures != web.Failures+suites["testdata/badchart/templates/rbac.yaml"].Failures {
		t.Errorf("total failures %d do not add up", doc.Failures)
	}
}

// Reports are the same bytes on every run.
func TestReportsAreDeterministic(t *testing.T) {
	var first string
	for i := range 5 {
		var buf bytes.Buffer
		if err := WriteJSON(&buf, reportsOf(t, sampleBundle, "testdata/badchart")); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = buf.String()
		} else if buf.String() != first {
			t.Fatal("JSON report differs between runs")
		}
	}
}
