package tenancy_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportGraph holds the package seams of the tenancy controller: the
// guard and the record storage know neither the release engine nor a
// backend, the release engine knows no backend, and registry+v1 and quota
// are leaves the backends use. Backends live in this package, so "no
// backend" is "not opctl.dev/opctl/pkg/tenancy itself".
func TestImportGraph(t *testing.T) {
	const root = "opctl.dev/opctl/pkg/tenancy"
	const (
		engine     = root + "/internal/helmrelease"
		records    = root + "/internal/helmrelease/records"
		guard      = root + "/internal/guard"
		registryv1 = root + "/internal/registryv1"
		quota      = root + "/quota"
	)
	tests := []struct {
		pkg       string
		forbidden []string
	}{
		{guard, []string{root, engine, records, registryv1, quota}},
		{records, []string{root, engine, guard, registryv1, quota}},
		{engine, []string{root, registryv1, quota}},
		{registryv1, []string{root, engine, records}},
		{quota, []string{root, engine, records, guard, registryv1}},
		{root + "/api/v1alpha1", []string{root, engine, records, guard, registryv1, quota}},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.pkg, root+"/"), func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", tt.pkg).Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", tt.pkg, err)
			}
			deps := map[string]bool{}
			for _, d := range strings.Fields(string(out)) {
				deps[d] = true
			}
			if !deps[tt.pkg] {
				t.Fatalf("go list -deps %s does not list the package itself: %s", tt.pkg, out)
			}
			for _, f := range tt.forbidden {
				if deps[f] {
					t.Errorf("%s imports %s (directly or not): that crosses a seam", tt.pkg, f)
				}
			}
		})
	}
}
