package validate

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func criterion(g *Grade, id string) Criterion {
	i := slices.IndexFunc(g.Criteria, func(c Criterion) bool { return c.ID == id })
	if i < 0 {
		return Criterion{}
	}
	return g.Criteria[i]
}

// level2Bundle is the sample as it was at Level 2: a Deployment-and-CRD
// operator with upgrades and no backup, metrics or autoscaling.
const level2Bundle = "testdata/level2/sample-operator"

func TestGradeSample(t *testing.T) {
	r, err := ValidateBundle(sampleBundle, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := r.Grade
	if g.Level != 5 || g.Name != "Auto Pilot" || g.DeclaredLevel != 5 {
		t.Errorf("grade %d %q declared %d, want 5 Auto Pilot as declared", g.Level, g.Name, g.DeclaredLevel)
	}
	for id, status := range map[string]string{
		"L1-spec": Met, "L1-status": Met, "L1-conditions": Met, "L1-docs": Met, "L1-related-images": Met, "L1-image-override": Met,
		"L2-operand-version": Met, "L2-status-version": Met, "L2-unsupported-version": Unknown,
		"L3-backup": Met, "L3-restore": Met, "L3-scaling": Met, "L3-pdb": Met, "L3-probes-limits": Met,
		"L4-metrics": Met, "L4-alerts": Met, "L4-operand-metrics": Met,
		"L5-autoscaling": Met, "L5-tuning": Met, "L5-auto-healing": Unknown,
	} {
		c := criterion(g, id)
		if c.Status != status {
			t.Errorf("%s = %q, want %q (evidence %v)", id, c.Status, status, c.Evidence)
		}
		if c.Status == Met && (len(c.Evidence) == 0 || c.Evidence[0] == "") {
			t.Errorf("%s is met without evidence", id)
		}
	}
	if e := criterion(g, "L2-status-version").Evidence[0]; !strings.Contains(e, "manifests/kv.opctl.dev_kvstores.yaml:") || !strings.Contains(e, "status.currentVersion") {
		t.Errorf("evidence %q does not name the file and path", e)
	}
	if slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Check == "OPC-G001" }) {
		t.Errorf("an honest claim was reported as overclaimed")
	}
}

func TestGradeWarnsOnOverclaim(t *testing.T) {
	dir := copyDir(t, level2Bundle)
	editFile(t, filepath.Join(dir, "manifests", "sample-operator.clusterserviceversion.yaml"), "capabilities: Seamless Upgrades", "capabilities: Deep Insights")
	r, err := ValidateBundle(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(r.Findings, func(f Finding) bool { return f.Check == "OPC-G001" })
	if i < 0 {
		t.Fatalf("no OPC-G001 for a Deep Insights claim at Level 2: %v", r.Findings)
	}
	if msg := r.Findings[i].Message; !strings.Contains(msg, "Level 4 (Deep Insights) but the evidence supports Level 2") || !strings.Contains(msg, "L3-backup") || !strings.Contains(msg, "L4-alerts") {
		t.Errorf("message %q", msg)
	}
}
