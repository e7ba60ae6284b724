package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"opctl.dev/opctl/pkg/packaging"
)

// package takes each target's flags, and a --<target>-only flag per
// target, from the registry.
func TestPackageTargetFlags(t *testing.T) {
	cmd := newPackageCommand(&GlobalOptions{})
	for _, name := range packaging.TargetNames() {
		if cmd.Flags().Lookup(name+"-only") == nil {
			t.Errorf("no --%s-only flag", name)
		}
	}
	for _, flag := range []string{"channels", "default-channel", "multi-namespace", "replaces", "skips", "skip-range", "crds", "rbac-scope"} {
		if cmd.Flags().Lookup(flag) == nil {
			t.Errorf("no --%s flag", flag)
		}
	}
	if code, _, errOut := run(t, "package", "--chart-only", "--bundle-only", t.TempDir()); code == 0 || !strings.Contains(errOut, "none of the others can be") {
		t.Errorf("--chart-only with --bundle-only: exit %d, %q", code, errOut)
	}
	out := t.TempDir()
	if code, _, errOut := run(t, "package", "../../operators/sample", "--out", out, "--bundle-only", "--channels", " fast, stable,,"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(out, "charts")); !os.IsNotExist(err) {
		t.Errorf("--bundle-only wrote charts/: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(out, "bundle", "sample-operator", "metadata", "annotations.yaml"))
	if err != nil || !strings.Contains(string(b), "channels.v1: fast,stable\n") {
		t.Errorf("bundle annotations %q, %v: want the channels fast,stable", b, err)
	}
}

// --set-env VAR=value fills the bundle's placeholders; bad input is a clear
// error before anything is read.
func TestPackageSetEnv(t *testing.T) {
	const fixture = "../../pkg/packaging/testdata/placeholders"
	for _, bad := range []string{"NOEQUALS", "1X=a"} {
		if code, _, errOut := run(t, "package", fixture, "--out", t.TempDir(), "--set-env", bad); code == 0 || !strings.Contains(errOut, "--set-env \""+bad+"\"") {
			t.Errorf("--set-env %s: exit %d, %q: want an error naming it", bad, code, errOut)
		}
	}
	out := t.TempDir()
	code, _, errOut := run(t, "package", fixture, "--out", out, "--set-env", "CLUSTER_NAME=c1", "--set-env", "REGISTRY=registry.example/team")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(errOut, "--set-env VAR=value") {
		t.Errorf("warnings %q: want none of placeholders left", errOut)
	}
	b, err := os.ReadFile(filepath.Join(out, "bundle", "phdemo", "manifests", "phdemo-settings_v1_configmap.yaml"))
	if err != nil || !strings.Contains(string(b), "helperImage: registry.example/team/helper:v1") {
		t.Errorf("bundle ConfigMap %s, %v: want the placeholders filled", b, err)
	}
}
