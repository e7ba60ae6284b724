package operatorkit_test

import (
	"context"
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit"
	testv1 "opctl.dev/opctl/pkg/operatorkit/internal/testapi/v1alpha1"
)

// managerAgent is the user agent of the in-process manager, so the audit
// log tells its writes from the test's own.
const managerAgent = "operatorkit-widget-manager"

var (
	cluster    *testcluster.Cluster
	kube       client.Client // the test's own client, uncached
	reconciler *operatorkit.Reconciler[*testv1.Widget]
	scheme     = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	os.Exit(testcluster.Main(m, &cluster, setup))
}

// setup installs the Widget CRD and starts a manager with the Widget
// reconciler.
func setup(c *testcluster.Cluster) (func(), error) {
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := testv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := c.InstallCRDs(context.Background(), "internal/testapi/testdata/crd"); err != nil {
		return nil, err
	}
	var err error
	if kube, err = client.New(c.Config, client.Options{Scheme: scheme}); err != nil {
		return nil, err
	}
	return c.StartManager(ctrl.Options{Scheme: scheme}, managerAgent, func(mgr ctrl.Manager) error {
		h := &widgetHandler{client: mgr.GetClient(), failures: map[types.UID]int32{}}
		reconciler = operatorkit.New(mgr, "widget", func() *testv1.Widget { return &testv1.Widget{} }, h, operatorkit.Options{MaxCreates: 3})
		if err := reconciler.SetupWithManager(mgr, &corev1.ConfigMap{}, &appsv1.Deployment{}); err != nil {
			return err
		}
		return setupGadgets(mgr)
	})
}
