package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// opctl runs the binary and returns its exit code and output.
func opctl(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(opctlBin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("running opctl: %v", err)
	}
	return code, out.String(), errOut.String()
}

func TestVersionJSON(t *testing.T) {
	code, out, errOut := opctl(t, "version", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var info struct {
		Version, Commit, Kubernetes string
		Libraries                   []struct{ Path, Version string }
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("version -o json is not JSON: %v\n%s", err, out)
	}
	if info.Version != stampedVersion || info.Commit != "e2e0000" {
		t.Errorf("version/commit = %q/%q, want the -ldflags stamp %q/e2e0000", info.Version, info.Commit, stampedVersion)
	}
	if !strings.HasPrefix(info.Kubernetes, "1.36.") {
		t.Errorf("kubernetes = %q, want the 1.36 libraries", info.Kubernetes)
	}
	libs := map[string]string{}
	for _, l := range info.Libraries {
		libs[l.Path] = l.Version
	}
	if !strings.HasPrefix(libs["k8s.io/client-go"], "v0.36.") {
		t.Errorf("client-go = %q, want v0.36.x", libs["k8s.io/client-go"])
	}
}

func TestErrorsExitNonZeroWithOneLine(t *testing.T) {
	tests := [][]string{
		{"no-such-command"},
		{"version", "-o", "sarif"},
		{"--kubeconfig"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := opctl(t, args...)
			if code == 0 {
				t.Errorf("exit 0, want non-zero")
			}
			if out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
			if n := strings.Count(errOut, "\n"); n != 1 || !strings.HasPrefix(errOut, "Error: ") {
				t.Errorf("stderr = %q, want exactly one \"Error: \" line", errOut)
			}
			if strings.Contains(errOut, "goroutine") || strings.Contains(errOut, ".go:") {
				t.Errorf("stderr carries a stack trace: %q", errOut)
			}
		})
	}
}

func TestCompletionBash(t *testing.T) {
	code, out, errOut := opctl(t, "completion", "bash")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "__start_opctl") {
		t.Errorf("bash completion lacks the __start_opctl function")
	}
}

func TestValidateExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"clean bundle", []string{"validate", "../../bundle/sample-operator"}, 0, "0 errors, 0 warnings", ""},
		{"chart with a warning passes by default", []string{"validate", "../../charts/sample-operator"}, 0, "OPC-C008", ""},
		{"warnings fail with --fail-on warning", []string{"validate", "--fail-on", "warning", "../../charts/sample-operator"}, 1, "0 errors, 1 warnings", ""},
		{"errors fail", []string{"validate", "../../pkg/validate/testdata/badchart"}, 1, "OPC-C007", ""},
		{"project packaged in memory", []string{"validate", "../../operators/sample"}, 0, "(packaged)", ""},
		{"unusable path", []string{"validate", "/nonexistent/opctl"}, 2, "", "cannot read /nonexistent/opctl"},
		{"not a bundle or chart", []string{"validate", "."}, 2, "", "is neither an OLM bundle"},
		{"bad --fail-on", []string{"validate", "--fail-on", "info", "."}, 2, "", `--fail-on "info"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := opctl(t, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
		})
	}
}

func TestValidateJSON(t *testing.T) {
	code, out, _ := opctl(t, "validate", "-o", "json", "../../pkg/validate/testdata/badchart")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Reports []struct {
			Kind     string
			Findings []struct{ Check, Severity, File string }
		}
		Summary struct{ Errors, Warnings int }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(doc.Reports) != 1 || doc.Reports[0].Kind != "chart" || doc.Summary.Errors == 0 || len(doc.Reports[0].Findings) != doc.Summary.Errors+doc.Summary.Warnings {
		t.Errorf("unexpected report: %+v", doc)
	}
}

func TestValidateFormats(t *testing.T) {
	for _, f := range []struct{ format, prefix string }{{"sarif", `{`}, {"junit", `<?xml`}} {
		file := filepath.Join(t.TempDir(), "report")
		code, out, errOut := opctl(t, "validate", "-o", f.format, "--output-file", file, "../../pkg/validate/testdata/badchart")
		if code != 1 || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", f.format, code, out, errOut)
		}
		b, err := os.ReadFile(file)
		if err != nil || !strings.HasPrefix(string(b), f.prefix) || !strings.Contains(string(b), "OPC-C007") {
			t.Errorf("%s report: %v\n%.200s", f.format, err, b)
		}
	}
}
