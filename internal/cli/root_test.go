package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Execute(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errOut}, args)
	return code, out.String(), errOut.String()
}

func TestVersionFormats(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		decode func([]byte, any) error
	}{
		{"json", []string{"version", "-o", "json"}, json.Unmarshal},
		{"yaml", []string{"version", "--output=yaml"}, func(b []byte, v any) error { return yaml.Unmarshal(b, v) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.args...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			var got struct {
				Version, GoVersion, Kubernetes string
				Libraries                      []struct{ Path, Version string }
			}
			if err := tt.decode([]byte(out), &got); err != nil {
				t.Fatalf("decoding %q: %v", out, err)
			}
			if got.Version == "" || !strings.HasPrefix(got.GoVersion, "go") {
				t.Errorf("incomplete version info: %+v", got)
			}
		})
	}
}

func TestVersionText(t *testing.T) {
	code, out, _ := run(t, "version")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"opctl", "commit", "go"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestErrorsAreOneLine(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown flag", []string{"version", "--nope"}, "unknown flag: --nope"},
		{"unsupported output", []string{"version", "-o", "xml"}, `unsupported --output "xml": use one of text, json, yaml`},
		{"extra argument", []string{"version", "extra"}, `unknown command "extra"`},
		{"negative verbosity", []string{"version", "-v", "-1"}, "invalid --verbosity -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.args...)
			if code == 0 {
				t.Fatalf("exit 0, want non-zero")
			}
			if out != "" {
				t.Errorf("stdout = %q, want empty", out)
			}
			lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "Error: ") || !strings.Contains(lines[0], tt.want) {
				t.Errorf("stderr = %q, want one line \"Error: ...%s...\"", errOut, tt.want)
			}
		})
	}
}

func TestExitErrorCode(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantCode int
		wantErr  string
	}{
		{"plain error", errors.New("boom"), 1, "Error: boom\n"},
		{"exit code with message", &ExitError{Code: 2, Err: errors.New("unusable input")}, 2, "Error: unusable input\n"},
		{"wrapped exit code", fmt.Errorf("validating: %w", &ExitError{Code: 2, Err: errors.New("bad")}), 2, "Error: validating: bad\n"},
		{"silent exit code", &ExitError{Code: 1}, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			root := NewRootCommand(Streams{Out: &out, Err: &errOut})
			root.AddCommand(&cobra.Command{Use: "fail", RunE: func(*cobra.Command, []string) error { return tt.err }})
			if code := execute(context.Background(), root, &errOut, []string{"fail"}); code != tt.wantCode {
				t.Errorf("exit %d, want %d", code, tt.wantCode)
			}
			if errOut.String() != tt.wantErr {
				t.Errorf("stderr = %q, want %q", errOut.String(), tt.wantErr)
			}
		})
	}
}

func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		t.Run(shell, func(t *testing.T) {
			code, out, errOut := run(t, "completion", shell)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if !strings.Contains(out, "opctl") || len(out) < 500 {
				t.Errorf("completion script for %s looks wrong (%d bytes)", shell, len(out))
			}
		})
	}
}

const testKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: https://a.invalid:6443}
- name: b
  cluster: {server: https://b.invalid:6443}
users:
- name: u
  user: {token: t}
contexts:
- name: ctx-a
  context: {cluster: a, user: u, namespace: team-a}
- name: ctx-b
  context: {cluster: b, user: u}
current-context: ctx-a
`

func TestGlobalKubeconfigFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(path, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		g          GlobalOptions
		wantServer string
		wantNS     string
	}{
		{"current context", GlobalOptions{Kubeconfig: path}, "https://a.invalid:6443", "team-a"},
		{"--context", GlobalOptions{Kubeconfig: path, Context: "ctx-b"}, "https://b.invalid:6443", "default"},
		{"-n wins", GlobalOptions{Kubeconfig: path, Namespace: "mine"}, "https://a.invalid:6443", "mine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := tt.g.RESTConfig()
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.wantServer {
				t.Errorf("Host = %q, want %q", cfg.Host, tt.wantServer)
			}
			ns, err := tt.g.ResolvedNamespace()
			if err != nil {
				t.Fatal(err)
			}
			if ns != tt.wantNS {
				t.Errorf("namespace = %q, want %q", ns, tt.wantNS)
			}
		})
	}
	bad := GlobalOptions{Kubeconfig: path, Context: "missing"}
	if _, err := bad.RESTConfig(); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("unknown context: got %v, want an error naming it", err)
	}
}

// TestOnRun checks that Execute's onRun hooks run once before a command and
// not when opctl only prints help or a usage error (main restores the
// garbage collector there).
func TestOnRun(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"command", []string{"version"}, 1},
		{"subcommand failing", []string{"validate", "does-not-exist"}, 1},
		{"root help", []string{"--help"}, 0},
		{"command help", []string{"validate", "--help"}, 0},
		{"no command", nil, 0},
		{"unknown flag", []string{"version", "--no-such-flag"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			var out, errOut bytes.Buffer
			Execute(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errOut}, tt.args, func() { calls++ })
			if calls != tt.want {
				t.Errorf("onRun called %d times, want %d (stderr %q)", calls, tt.want, errOut.String())
			}
		})
	}
}
