package kitapi

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

// TestPhaseEnumIsTheStandardGraph: status.phase's enum in the CRDs is the
// set of phases of lifecycle.Standard, the graph the Reconciler runs.
func TestPhaseEnumIsTheStandardGraph(t *testing.T) {
	src, err := os.ReadFile("types.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\+kubebuilder:validation:Enum=(\S+)\n\s*// \+optional\n\s*Phase lifecycle.Phase`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no enum marker on Status.Phase")
	}
	enum := strings.Split(string(m[1]), ";")
	var phases []string
	for _, p := range lifecycle.Standard().Phases() {
		phases = append(phases, string(p))
	}
	slices.Sort(enum)
	slices.Sort(phases)
	if !slices.Equal(enum, phases) {
		t.Errorf("status.phase enum %v, the standard graph's phases %v", enum, phases)
	}
}
