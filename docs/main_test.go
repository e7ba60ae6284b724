package docs

import (
	"os"
	"testing"

	"opctl.dev/opctl/internal/testcluster"
)

// cluster is the test control plane; the first runnable block that asks
// for one brings it up (testcluster.Require), so a docs change whose
// blocks need none tests without a cluster.
var cluster *testcluster.Cluster

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster)) }
