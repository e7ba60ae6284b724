package e2e

import (
	"fmt"
	"os"
	"testing"

	"opctl.dev/opctl/internal/testcluster"
)

var (
	cluster *testcluster.Cluster
	// opctlBin and managerBin are built once for the package.
	opctlBin, managerBin string
)

// stampedVersion is linked into the test binary to prove -ldflags stamping.
const stampedVersion = "v0.0.0-e2e"

// TestMain builds the binaries, which needs no cluster, so that the CLI
// tests also run in unit-test mode; then it runs the tests, whose first
// testcluster.Require brings the control plane up.
func TestMain(m *testing.M) {
	cleanup, err := buildBinaries()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the binaries: %v\n", err)
		os.Exit(1)
	}
	code := testcluster.Main(m, &cluster)
	cleanup()
	os.Exit(code)
}

func buildBinaries() (func(), error) {
	dir, err := os.MkdirTemp("", "opctl-e2e-")
	if err != nil {
		return nil, err
	}
	opctlBin, err = testcluster.GoBuild(dir, "opctl.dev/opctl/cmd/opctl",
		"-X opctl.dev/opctl/internal/version.version="+stampedVersion+" -X opctl.dev/opctl/internal/version.commit=e2e0000")
	if err == nil {
		managerBin, err = testcluster.GoBuild(dir, "opctl.dev/opctl/operators/sample/cmd", "")
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return func() { os.RemoveAll(dir) }, nil
}
