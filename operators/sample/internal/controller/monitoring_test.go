package controller_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
)

// TestServiceMonitor: a store gets a ServiceMonitor for its exporter
// sidecars where the cluster serves the monitoring API (the test cluster
// does), applied with no writes at steady state.
func TestServiceMonitor(t *testing.T) {
	c, k := runningStore(t, "kv-monitor", "mon", 2)
	ctx := context.Background()
	s := statefulSet(t, k)
	if cs := s.Spec.Template.Spec.Containers; len(cs) != 2 || cs[1].Name != "exporter" || cs[1].Ports[0].ContainerPort != 9121 {
		t.Fatalf("containers %v, want the valkey server and the exporter sidecar", cs)
	}
	sm := &unstructured.Unstructured{}
	sm.SetAPIVersion("monitoring.coreos.com/v1")
	sm.SetKind("ServiceMonitor")
	get(t, k.Namespace, "mon", sm)
	port, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if len(port) != 1 || port[0].(map[string]any)["port"] != "metrics" || sel["app.kubernetes.io/instance"] != "mon" {
		t.Errorf("ServiceMonitor spec %v", sm.Object["spec"])
	}
	if refs := sm.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "KVStore" {
		t.Errorf("ServiceMonitor owners %v", refs)
	}

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
