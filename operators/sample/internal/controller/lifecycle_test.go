package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/operatorkit/kitapi"
	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

// TestLifecycleWishedInSpec: a KVStore's Servicing and Stopping are
// reached from spec.lifecycle and seen live (status.phase, the Lifecycle
// condition and the PhaseChanged Events); a wish the graph forbids is
// refused by the API server.
func TestLifecycleWishedInSpec(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "kv-lifecycle", restricted)
	k := newKVStore(ns, "life", 1)
	create(t, k)
	waitKV(t, k, "KVStore Ready", ready)
	inPhase := func(p lifecycle.Phase) func(*kvv1.KVStore) error {
		return func(k *kvv1.KVStore) error {
			if k.Status.Phase != p {
				return fmt.Errorf("phase %s", k.Status.Phase)
			}
			return testcluster.HasCondition(k.Status.Conditions, operatorkit.ConditionLifecycle, metav1.ConditionTrue, string(p))
		}
	}
	for _, step := range []lifecycle.Phase{lifecycle.Servicing, lifecycle.Running, lifecycle.Stopping} {
		testcluster.UpdateObject(t, kube, &kvv1.KVStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "life"}}, func(k *kvv1.KVStore) {
			k.Spec.Lifecycle = kitapi.Lifecycle(step)
		})
		want := step
		if step == lifecycle.Stopping {
			want = lifecycle.Ended // once the pods are gone
		}
		waitKV(t, k, string(want), inPhase(want))
	}
	sts := &appsv1.StatefulSet{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "life"}, sts); err != nil {
		t.Fatal(err)
	}
	if *sts.Spec.Replicas != 0 || sts.Status.Replicas != 0 {
		t.Errorf("a stopped KVStore's StatefulSet has %d replicas (%d pods)", *sts.Spec.Replicas, sts.Status.Replicas)
	}
	testcluster.WaitEventNotes(t, kube, ns, "life", "PhaseChanged", wait,
		"Running → Servicing", "Servicing → Running", "Running → Stopping", "Stopping → Ended")
	if err := kube.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
		t.Fatal(err)
	}
	k.Spec.Lifecycle = kitapi.Lifecycle(lifecycle.Servicing)
	if err := kube.Update(ctx, k); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "the lifecycle graph forbids this wish") {
		t.Errorf("wishing Servicing after Stopping: %v, want the CRD's transition rule to refuse it", err)
	}
}
