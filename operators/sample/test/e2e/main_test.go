package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	managerBin = filepath.Join(dir, "manager")
	out, err := exec.Command("go", "build", "-o", managerBin, "opctl.dev/opctl/operators/sample/cmd").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("building the manager: %v\n%s", err, out)
	}
	return func() { os.RemoveAll(dir) }, nil
}
