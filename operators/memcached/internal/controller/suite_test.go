package controller

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// testConfig is the admin config of the test control plane, and
// testScheme knows every type of this operator.
var (
	testConfig *rest.Config
	testScheme = runtime.NewScheme()
)

// TestMain starts the test control plane: the one OPCTL_TEST_KUBECONFIG
// names (opctl's, with simulated nodes), else envtest's binaries from
// KUBEBUILDER_ASSETS. The CRDs are installed from config/crd/bases.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if err := AddToScheme(testScheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                testScheme,
	}
	if path := os.Getenv("OPCTL_TEST_KUBECONFIG"); path != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "reading OPCTL_TEST_KUBECONFIG: %v\n", err)
			return 1
		}
		env.Config, env.UseExistingCluster = cfg, ptr.To(true)
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the test control plane (set OPCTL_TEST_KUBECONFIG or KUBEBUILDER_ASSETS): %v\n", err)
		return 1
	}
	testConfig = cfg
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the test control plane: %v\n", err)
	}
	return code
}
