package testcluster

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// envtest runs on the binaries hack/testbin.sh builds: the lighter choice
// for tests that need only an API server (no controllers, nodes or pods).
func TestEnvtestUsesTestbin(t *testing.T) {
	Require(t, cluster) // the same binaries; skipped with the cluster tests
	bin, err := BinDir()
	if err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: bin}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest on %s: %v", bin, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	cs := kubernetes.NewForConfigOrDie(cfg)
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Major != "1" || v.Minor != "36" {
		t.Errorf("envtest API server is %s.%s, want the 1.36 testbin build", v.Major, v.Minor)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a ConfigMap on envtest: %v", err)
	}
}
