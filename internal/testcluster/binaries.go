package testcluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Binaries the control plane needs, all built by hack/testbin.sh.
var requiredBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

// EnvBinDir overrides where the binaries are looked for.
const EnvBinDir = "OPCTL_TESTBIN_DIR"

// BinDir returns the directory holding the test control plane binaries:
// $OPCTL_TESTBIN_DIR, or bin/k8s/<K8S_VERSION> in the repository, with the
// version read from hack/versions.env. It checks that every binary is there.
func BinDir() (string, error) {
	dir := os.Getenv(EnvBinDir)
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return "", err
		}
		v, err := readVersion(filepath.Join(root, "hack", "versions.env"), "K8S_VERSION")
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin", "k8s", v)
	}
	for _, b := range append(requiredBinaries, filepath.Join("kwok-data", "crd-stages.yaml"), filepath.Join("monitoring-crds", "monitoring.coreos.com_servicemonitors.yaml")) {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("test control plane binary %s is missing in %s: run `make testbin` first", b, dir)
		}
	}
	return dir, nil
}

// repoRoot walks up from the working directory to the directory holding
// hack/versions.env.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "versions.env")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding repository root: no hack/versions.env above the working directory; set " + EnvBinDir)
		}
		dir = parent
	}
}

// readVersion returns the value of KEY=value in an env file.
func readVersion(path, key string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("reading versions: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(s.Text()), "=")
		if ok && k == key && v != "" {
			return v, nil
		}
	}
	if err := s.Err(); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return "", fmt.Errorf("%s: no %s= line", path, key)
}

// RequireBinDir returns BinDir for a test that runs one of its binaries
// (helm, kubectl, opm). Without them it skips in unit-test mode
// (OPCTL_SKIP_CLUSTER=1, `make test-unit`) and fails otherwise: `make test`
// builds them and skips nothing.
func RequireBinDir(t testing.TB) string {
	t.Helper()
	dir, err := BinDir()
	if err == nil {
		return dir
	}
	if os.Getenv(EnvSkip) == "1" {
		t.Skipf("%s=1 and no test binaries: %v", EnvSkip, err)
	}
	t.Fatal(err)
	return ""
}

// DebianProgram finds a program of the Debian package pkg that make
// test-deps installs: a missing one fails the test, or skips it in unit
// mode (EnvSkip).
func DebianProgram(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(EnvSkip) == "1" {
			t.Skipf("%s not installed (make test-deps installs Debian's %s package)", name, pkg)
		}
		t.Fatalf("%s not installed: run make test-deps: %v", name, err)
	}
	return p
}
