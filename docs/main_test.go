package docs

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"opctl.dev/opctl/internal/testcluster"
)

// cluster is the test control plane, present only when a runnable block
// asks for one and OPCTL_SKIP_CLUSTER is not 1.
var cluster *testcluster.Cluster

// TestMain attaches to (or starts) the test control plane only when some
// runnable block needs it, so that a docs change needs no cluster to test.
func TestMain(m *testing.M) {
	docs, err := loadDocs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, d := range docs {
		for _, b := range d.blocks {
			if b.runnable && slices.Contains(b.tags, tagCluster) {
				os.Exit(testcluster.Main(m, &cluster))
			}
		}
	}
	os.Exit(m.Run())
}
