package e2e

import (
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

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster, buildBinaries)) }

func buildBinaries(*testcluster.Cluster) (func(), error) {
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
