package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// opctlBin is the opctl binary built once for the whole package.
var opctlBin string

// stampedVersion is linked into the test binary to prove -ldflags stamping.
const stampedVersion = "v0.0.0-e2e"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "opctl-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	opctlBin = filepath.Join(dir, "opctl")
	build := exec.Command("go", "build", "-o", opctlBin,
		"-ldflags", "-X opctl.dev/opctl/internal/version.version="+stampedVersion+" -X opctl.dev/opctl/internal/version.commit=e2e0000",
		"opctl.dev/opctl/cmd/opctl")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building opctl: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
