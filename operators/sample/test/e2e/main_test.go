package e2e

import (
	"os"
	"testing"

	"opctl.dev/opctl/internal/testcluster"
)

var (
	cluster    *testcluster.Cluster
	managerBin string
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster, buildManager)) }

// buildManager builds operators/sample/cmd into a temporary directory.
func buildManager(*testcluster.Cluster) (func(), error) {
	dir, err := os.MkdirTemp("", "kvstore-e2e-")
	if err != nil {
		return nil, err
	}
	if managerBin, err = testcluster.GoBuild(dir, "opctl.dev/opctl/operators/sample/cmd", ""); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return func() { os.RemoveAll(dir) }, nil
}
