package controller_test

import (
	"context"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/operators/sample/internal/controller"
	"opctl.dev/opctl/pkg/operatorkit"
)

// agent is the user agent of the in-process KVStore manager.
const agent = "kvstore-operator-test"

// suiteLabel marks the KVStores of this package; its manager sees no
// others, so other packages may run KVStore operators on the same cluster.
const suiteLabel = "kv.opctl.dev/test-suite"

var (
	cluster    *testcluster.Cluster
	kube       client.Client
	reconciler *operatorkit.Reconciler[*kvv1.KVStore]
	scheme     = runtime.NewScheme()
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m, &cluster, setup)) }

func setup(c *testcluster.Cluster) (func(), error) {
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := kvv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := c.InstallCRDs(context.Background(), "../../config/crd/bases"); err != nil {
		return nil, err
	}
	var err error
	if kube, err = client.New(c.Config, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	suite, err := labels.Parse(suiteLabel + "=controller")
	if err != nil {
		return nil, err
	}
	opts := ctrl.Options{Scheme: scheme, Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
		&kvv1.KVStore{}: {Label: suite}, &kvv1.KVBackup{}: {Label: suite},
	}}}
	stop, err := c.StartManager(opts, agent, func(mgr ctrl.Manager) error {
		reconciler, err = controller.Setup(mgr, controller.Options{Workers: 4})
		return err
	})
	if err != nil {
		return nil, err
	}
	stopDataPath, err := startDataPathManager(c)
	if err != nil {
		stop()
		return nil, err
	}
	return func() { stopDataPath(); stop() }, nil
}
