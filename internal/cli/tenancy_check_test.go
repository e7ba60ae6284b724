package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"opctl.dev/opctl/pkg/validate"
)

// opctl tenancy check --offline judges a chart against the shipped
// baseline and the ClusterRole files given, prints each refusal and a
// ClusterRole that would allow the missing cluster-wide rules; with that
// ClusterRole given, the rules are no longer refused.
func TestTenancyCheckOffline(t *testing.T) {
	fleet := "../../pkg/packaging/testdata/golden/workloads/charts/fleet-operator"
	code, out, errOut := run(t, "tenancy", "check", "--offline", fleet)
	if code != 1 || !strings.Contains(out, "would be refused for a tenant (judged against the shipped baseline)") ||
		!strings.Contains(out, "grants cluster-wide get,list,watch,update,patch on fleet.example.com/fleets") ||
		!strings.Contains(out, "kind: ClusterRole\nmetadata:\n  name: fleet-operator-for-tenants") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr: %s", code, out, errOut)
	}
	role := filepath.Join(t.TempDir(), "role.yaml")
	if err := os.WriteFile(role, []byte(out[strings.Index(out, "\n---\n")+5:]), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, "tenancy", "check", "--offline", "--cluster-role-file", role, "-o", "json", fleet)
	var v validate.TenantVerdict
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("exit %d, stdout %q, stderr %q: %v", code, out, errOut, err)
	}
	if code != 1 || v.Allow != nil || len(v.ClusterRoles) != 1 || v.ClusterRoles[0] != "fleet-operator-for-tenants" {
		t.Errorf("with the suggested role: exit %d, verdict %+v", code, v)
	}
	for _, r := range v.Refusals {
		if strings.Contains(r.Message, "grants cluster-wide") {
			t.Errorf("a rule the given role allows is still refused: %s", r.Message)
		}
	}
	if len(v.Refusals) == 0 {
		t.Error("the chart's PriorityClass and pods below restricted are no longer refused")
	}

	fits := "../../pkg/packaging/testdata/golden/multigroup/charts/maritime-cargo-routing-planner-operator1"
	if code, out, _ := run(t, "tenancy", "check", "--offline", fits); code != 0 || !strings.Contains(out, "fits a tenant") {
		t.Errorf("a chart that fits: exit %d, %s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("kind: Role\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, "tenancy", "check", "--offline", "--cluster-role-file", bad, fits); code != 2 || !strings.Contains(errOut, "bad.yaml: document 1 is a \"Role\"") {
		t.Errorf("a file that is no ClusterRole: exit %d, %s", code, errOut)
	}
}
