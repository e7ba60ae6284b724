package validate

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestCatalogs(t *testing.T) {
	good, err := ValidateCatalog(context.Background(), "testdata/catalog/good")
	if err != nil {
		t.Fatal(err)
	}
	if len(good.Findings) != 0 {
		t.Errorf("good catalog: %v", good.Findings)
	}
	bad, err := ValidateCatalog(context.Background(), "testdata/catalog/bad")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"OPC-K000": "multiple channel heads",
		"OPC-K001": `package other-operator: default channel "beta" is not one of its channels`,
		"OPC-K002": "channel stable has 2 heads (sample-operator.v0.2.0, sample-operator.v0.3.0)",
		"OPC-K003": "channel stable: cyclic-operator.v1.5.0, cyclic-operator.v1.6.0 cannot be reached from the head cyclic-operator.v2.0.0",
	}
	for id, msg := range want {
		if !slices.ContainsFunc(bad.Findings, func(f Finding) bool { return f.Check == id && strings.Contains(f.Message, msg) }) {
			t.Errorf("no %s containing %q in %v", id, msg, bad.Findings)
		}
	}
	if _, err := ValidateCatalog(context.Background(), "testdata/badchart"); err == nil {
		t.Error("a chart directory loaded as a catalog")
	}
	if k, err := Detect("testdata/catalog/good"); err != nil || k != KindCatalog {
		t.Errorf("Detect = %q, %v", k, err)
	}
}
