package controller_test

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"opctl.dev/opctl/internal/testcluster"
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/operators/sample/internal/controller"
)

// crashLoopStage crash-loops the pods of namespace ns whose config
// checksum is not good: the kubelet's view of a server that exits on a
// bad directive.
func crashLoopStage(ns, good string) *unstructured.Unstructured {
	return testcluster.PodStage("kv-crashloop-"+ns, "Pending", testcluster.CrashLoopStatus,
		map[string]any{"key": ".metadata.namespace", "operator": "In", "values": []any{ns}},
		map[string]any{"key": `.metadata.annotations["kv.opctl.dev/config-sha256"]`, "operator": "NotIn", "values": []any{good}})
}

// TestConfigCrashLoopRollsBack changes spec.config to one whose pods
// crash-loop: the operator rolls the config back to the last one that ran,
// says so, and does not retry it until spec.config changes again.
func TestConfigCrashLoopRollsBack(t *testing.T) {
	c, k := runningStore(t, "kv-crashloop", "cl", 2)
	ctx := context.Background()
	good := statefulSet(t, k).Spec.Template.Annotations["kv.opctl.dev/config-sha256"]
	remove, err := c.AddStage(ctx, crashLoopStage(k.Namespace, good))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remove(context.Background()) })

	testcluster.UpdateObject(t, kube, k, func(k *kvv1.KVStore) { k.Spec.Config["maxclients"] = "not-a-number" })
	waitKV(t, k, "config rolled back", func(k *kvv1.KVStore) error {
		if err := conditionIs("Degraded", "True", controller.ReasonConfigRolledBack)(k); err != nil {
			return err
		}
		if k.Status.ReadyReplicas != 2 {
			return fmt.Errorf("%d pods ready", k.Status.ReadyReplicas)
		}
		return nil
	})
	if got := statefulSet(t, k).Spec.Template.Annotations["kv.opctl.dev/config-sha256"]; got != good {
		t.Errorf("the pods run config %s, want the last good one %s", got, good)
	}
	if k.Status.Config == nil || k.Status.Config.Good["maxclients"] != "" || k.Status.Config.FailedSHA256 == "" {
		t.Errorf("status.config %+v", k.Status.Config)
	}
	testcluster.Eventually(t, wait, "ConfigRolledBack event", func(ctx context.Context) error {
		return hasEvent(ctx, k.Namespace, "cl", controller.ReasonConfigRolledBack)
	})

	// A new spec.config is tried again, and, running, becomes the good one.
	if err := remove(ctx); err != nil {
		t.Fatal(err)
	}
	testcluster.UpdateObject(t, kube, k, func(k *kvv1.KVStore) { k.Spec.Config["maxclients"] = "500" })
	waitKV(t, k, "the new config runs", func(k *kvv1.KVStore) error {
		if err := readyWith(2, kvv1.DefaultVersion)(k); err != nil {
			return err
		}
		if k.Status.Config == nil || k.Status.Config.Good["maxclients"] != "500" || k.Status.Config.FailedSHA256 != "" {
			return fmt.Errorf("status.config %+v", k.Status.Config)
		}
		return nil
	})
}
