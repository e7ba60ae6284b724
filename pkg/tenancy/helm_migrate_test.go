package tenancy

import (
	"testing"

	"k8s.io/client-go/kubernetes/fake"
)

// TestInstalledReleaseNeedsNoMigration: a release this process installed
// is not looked for in its namespace again; another release still is.
func TestInstalledReleaseNeedsNoMigration(t *testing.T) {
	cs := fake.NewClientset()
	h := &helmClient{secrets: cs, records: newRecordStore(cs.CoreV1().Secrets("store"), "store"), migrated: map[string]bool{}, log: t.Logf}
	h.noLegacy("t", "ns", "kv")
	for _, tc := range []struct {
		release string
		reads   bool
	}{{"kv", false}, {"other", true}} {
		cs.ClearActions()
		if _, err := h.migrate("t", "ns", tc.release); err != nil {
			t.Fatal(err)
		}
		listed := false
		for _, a := range cs.Actions() {
			listed = listed || (a.GetVerb() == "list" && a.GetNamespace() == "ns")
		}
		if listed != tc.reads {
			t.Errorf("release %s: listed its namespace %v, want %v (%v)", tc.release, listed, tc.reads, cs.Actions())
		}
	}
}
