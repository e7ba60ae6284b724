package test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"opctl.dev/opctl/internal/cli"
	"opctl.dev/opctl/internal/testcluster"
)

// opctl runs the opctl command line in process.
func opctl(t *testing.T, args ...string) string {
	t.Helper()
	var out, errs bytes.Buffer
	if code := cli.Execute(context.Background(), cli.Streams{Out: &out, Err: &errs}, args); code != 0 {
		t.Fatalf("opctl %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errs.String())
	}
	return out.String()
}

// TestPackageLintAndValidate: opctl package makes a chart that helm lint
// --strict passes, and opctl validate finds nothing at warning level and
// grades the operator Level 2 (Seamless Upgrades).
func TestPackageLintAndValidate(t *testing.T) {
	bin := testcluster.RequireBinDir(t)
	out := t.TempDir()
	opctl(t, "package", operator, "--out", out)
	chart := filepath.Join(out, "charts", "memcached-operator")
	b, err := exec.Command(filepath.Join(bin, "helm"), "lint", "--strict", chart).CombinedOutput()
	if err != nil || !strings.Contains(string(b), "0 chart(s) failed") {
		t.Errorf("helm lint --strict: %v\n%s", err, b)
	}
	var report struct {
		Reports []struct {
			Kind  string
			Grade *struct{ Level int }
		}
		Summary struct{ Errors, Warnings int }
	}
	raw := opctl(t, "validate", operator, "--fail-on", "warning", "-o", "json")
	if err := json.Unmarshal([]byte(raw), &report); err != nil {
		t.Fatalf("validate report: %v\n%s", err, raw)
	}
	level := 0
	for _, r := range report.Reports {
		if r.Kind == "bundle" && r.Grade != nil {
			level = r.Grade.Level
		}
	}
	t.Logf("validate: %d errors, %d warnings, level %d", report.Summary.Errors, report.Summary.Warnings, level)
	if report.Summary.Errors+report.Summary.Warnings != 0 || level < 2 {
		t.Errorf("validate: %d errors, %d warnings, level %d; want none and level 2", report.Summary.Errors, report.Summary.Warnings, level)
	}
}
