package testcluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestBinDirMissingBinaryNamesTheFix(t *testing.T) {
	dir := t.TempDir()
	// Only etcd is present: the first missing binary must be named.
	if err := os.WriteFile(filepath.Join(dir, "etcd"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvBinDir, dir)
	_, err := BinDir()
	if err == nil {
		t.Fatal("BinDir succeeded on a directory without binaries")
	}
	for _, want := range []string{"kube-apiserver", dir, "make testbin"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestReadVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "versions.env")
	content := "# comment\nETCD_VERSION=v3.6.16\n  K8S_VERSION=v1.36.3  \nEMPTY=\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key, want string
		wantErr   bool
	}{
		{"K8S_VERSION", "v1.36.3", false},
		{"ETCD_VERSION", "v3.6.16", false},
		{"EMPTY", "", true},
		{"MISSING", "", true},
	}
	for _, tt := range tests {
		got, err := readVersion(path, tt.key)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("readVersion(%s) = %q, %v; want %q, error %v", tt.key, got, err, tt.want, tt.wantErr)
		}
	}
}

// The helm of testbin is stamped the way upstream's build stamps it: its
// full version, and the test control plane's Kubernetes version as the
// default of helm template and lint, so charts that need a recent
// Kubernetes render without --kube-version.
func TestHelmBuild(t *testing.T) {
	bin := filepath.Join(RequireBinDir(t), "helm")
	want, err := readVersion("../../hack/versions.env", "HELM_VERSION")
	if err != nil {
		t.Fatal(err)
	}
	k8s, err := readVersion("../../hack/versions.env", "K8S_VERSION")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version", "--template", "{{.Version}} {{.GitTreeState}}").CombinedOutput()
	if got := strings.TrimSpace(string(out)); err != nil || got != want+" clean" {
		t.Errorf("helm version = %q (%v), want %q", got, err, want+" clean")
	}
	chart := filepath.Join(t.TempDir(), "kv")
	if err := os.MkdirAll(filepath.Join(chart, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"Chart.yaml":               "apiVersion: v2\nname: kv\nversion: 0.1.0\nkubeVersion: '>= 1.30.0-0'\n",
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kv\ndata:\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(chart, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	major, minor, _ := strings.Cut(strings.TrimPrefix(k8s, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	out, err = exec.Command(bin, "template", "x", chart).CombinedOutput()
	if wantKube := "kube: \"v" + major + "." + minor + ".0\""; err != nil || !strings.Contains(string(out), wantKube) {
		t.Errorf("helm template without --kube-version: %v\n%s\nwant %s", err, out, wantKube)
	}
}

// helm4 is Helm 4 at the pinned version, from a clean tree.
func TestHelm4Build(t *testing.T) {
	bin := filepath.Join(RequireBinDir(t), "helm4")
	want, err := readVersion("../../hack/versions.env", "HELM4_VERSION")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version", "--template", "{{.Version}} {{.GitTreeState}}").CombinedOutput()
	if got := strings.TrimSpace(string(out)); err != nil || got != want+" clean" || !strings.HasPrefix(want, "v4.") {
		t.Errorf("helm4 version = %q (%v), want %q (a v4)", got, err, want+" clean")
	}
}
