package testcluster

import (
	"os"
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
