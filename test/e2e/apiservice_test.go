package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"opctl.dev/opctl/internal/testcluster"
)

// A chart with an aggregated API installs into two namespaces of one
// cluster: the first release owns the APIService, which calls its own
// Service; the second sets apiService.enabled=false. It runs on a control
// plane of its own: an APIService that nothing serves makes discovery
// fail for every other test sharing a cluster.
func TestAPIServiceChartInstallsTwice(t *testing.T) {
	c := testcluster.RequireOwn(t, testcluster.Options{})
	ctx := context.Background()
	helm := filepath.Join(testcluster.RequireBinDir(t), "helm")

	out := packageTwice(t, filepath.Join("..", "..", "pkg", "packaging", "testdata", "aggregated"))
	chartDir := filepath.Join(out, "charts", "agg-operator")
	install := func(release, ns string, set ...string) string {
		args := []string{"install", release, chartDir, "--kubeconfig", c.Kubeconfig, "--namespace", ns, "--create-namespace", "--set", "webhooks.enabled=false"}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		if b, err := exec.Command(helm, args...).CombinedOutput(); err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		b, err := exec.Command(helm, "get", "manifest", release, "--kubeconfig", c.Kubeconfig, "--namespace", ns).CombinedOutput()
		if err != nil {
			t.Fatalf("helm get manifest %s: %v\n%s", release, err, b)
		}
		return string(b)
	}
	first := install("first", "agg-a")
	second := install("second", "agg-b", "crds.install=false", "apiService.enabled=false")
	if !strings.Contains(first, "kind: APIService") || strings.Contains(second, "kind: APIService") {
		t.Errorf("the first release must hold the APIService and the second not (first: %t, second: %t)",
			strings.Contains(first, "kind: APIService"), strings.Contains(second, "kind: APIService"))
	}

	dyn := dynamic.NewForConfigOrDie(c.Config)
	api, err := dyn.Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}).
		Get(ctx, "v1alpha1.metrics.agg.example.com", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc := api.Object["spec"].(map[string]any)["service"].(map[string]any)
	if svc["namespace"] != "agg-a" {
		t.Errorf("the APIService calls a Service in %v, want the first release's namespace agg-a", svc["namespace"])
	}
	name, _ := svc["name"].(string)
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "services"}).Namespace("agg-a").Get(ctx, name, metav1.GetOptions{}); err != nil {
		t.Errorf("the APIService's Service %s of the first release: %v", name, err)
	}
}
