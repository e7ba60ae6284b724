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

// TestLifecycleMarkersAreTheStandardGraph: the markers of Lifecycle are
// what the standard graph gives.
func TestLifecycleMarkersAreTheStandardGraph(t *testing.T) {
	src, err := os.ReadFile("lifecycle.go")
	if err != nil {
		t.Fatal(err)
	}
	m := lifecycle.Standard()
	var wishable []string
	for _, p := range lifecycle.Wishable {
		wishable = append(wishable, string(p))
	}
	for _, want := range []string{
		"+kubebuilder:validation:Enum=" + strings.Join(wishable, ";") + "\n",
		`+kubebuilder:validation:XValidation:rule="` + m.WishRule(lifecycle.Wishable) + `",message="` + m.WishMessage(lifecycle.Wishable) + `"` + "\n",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("lifecycle.go lacks the marker %s", want)
		}
	}
}
