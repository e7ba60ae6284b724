package packaging

import (
	"os"
	"testing"

	"opctl.dev/opctl/internal/testcluster"
)

// testCluster is the shared test control plane, started by the first test
// that needs one (testcluster.Require).
var testCluster *testcluster.Cluster

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &testCluster)) }
