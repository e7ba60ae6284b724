package controller_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"opctl.dev/opctl/internal/testcluster"
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

// TestServiceMonitorGatedOnTheAPI: a store gets a ServiceMonitor for its
// exporter sidecars once the cluster serves the API, and not before.
func TestServiceMonitorGatedOnTheAPI(t *testing.T) {
	c, k := runningStore(t, "kv-monitor", "mon", 2)
	ctx := context.Background()
	sm := &unstructured.Unstructured{}
	sm.SetAPIVersion("monitoring.coreos.com/v1")
	sm.SetKind("ServiceMonitor")
	if err := kube.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: "mon"}, sm); err == nil {
		t.Fatal("a ServiceMonitor exists without the API")
	}
	s := statefulSet(t, k)
	if cs := s.Spec.Template.Spec.Containers; len(cs) != 2 || cs[1].Name != "exporter" || cs[1].Ports[0].ContainerPort != 9121 {
		t.Fatalf("containers %v, want the valkey server and the exporter sidecar", cs)
	}

	raw, err := os.ReadFile("testdata/servicemonitor-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		t.Fatal(err)
	}
	if err := c.InstallCRDs(ctx, "testdata"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(context.Background(), crd) })
	// A reconcile after the API is served (and discovered) creates it;
	// an annotation change brings one.
	touches := 0
	testcluster.Eventually(t, wait, "the store's ServiceMonitor", func(ctx context.Context) error {
		if err := kube.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: "mon"}, sm); err != nil {
			touches++
			testcluster.UpdateObject(t, kube, k, func(k *kvv1.KVStore) {
				k.Annotations = map[string]string{"test/touch": fmt.Sprint(touches)}
			})
			return err
		}
		port, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		if len(port) != 1 || port[0].(map[string]any)["port"] != "metrics" || sel["app.kubernetes.io/instance"] != "mon" {
			return fmt.Errorf("spec %v", sm.Object["spec"])
		}
		if refs := sm.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "KVStore" {
			return fmt.Errorf("owners %v", refs)
		}
		return nil
	})
	t.Logf("the ServiceMonitor appeared after %d reconciles were requested", touches)

	// Applied as unstructured, it still costs nothing at steady state.
	time.Sleep(2 * time.Second)
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(k)}
	w := c.WritesDuring(t, agent, k.Namespace, func() {
		for range 20 {
			if _, err := reconciler.Reconcile(ctx, req); err != nil {
				t.Fatal(err)
			}
		}
	})
	if len(w) != 0 {
		t.Errorf("steady-state writes with a ServiceMonitor: %s", testcluster.Describe(w))
	}
}
