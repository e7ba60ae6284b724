package action_test

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
)

var (
	cluster *testcluster.Cluster
	kube    client.Client
)

func TestMain(m *testing.M) {
	os.Exit(testcluster.Main(m, &cluster, func(c *testcluster.Cluster) (func(), error) {
		var err error
		kube, err = client.New(c.Config, client.Options{Scheme: newScheme()})
		return func() {}, err
	}))
}
