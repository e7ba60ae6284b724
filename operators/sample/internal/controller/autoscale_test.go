package controller_test

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/operators/sample/internal/instance/instancetest"
)

// TestAutoscaling loads a store's primary with redis-benchmark: the
// operator reads the load from the server, scales out to what it needs,
// and after the load stops scales back in one pod per cool-down.
func TestAutoscaling(t *testing.T) {
	c := testcluster.Require(t, cluster)
	bench := testcluster.DebianProgram(t, "redis-benchmark", "redis-tools")
	ns := c.Namespace(t, "kv-autoscale", restricted)
	srv := serveStore(t, ns, "as", 3)
	k := dataPathStore(ns, "as", 1)
	k.Spec.Replicas = nil
	k.Spec.Autoscaling = &kvv1.AutoscalingSpec{MinReplicas: 1, MaxReplicas: 3, TargetOpsPerSecond: 2000, CooldownSeconds: 2}
	create(t, k)
	waitKV(t, k, "KVStore Ready with one pod", readyWith(1, kvv1.DefaultVersion))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	load := exec.CommandContext(ctx, bench, "-h", "127.0.0.1", "-p", fmt.Sprint(srv["as-0"].Port), "-a", instancetest.Password,
		"-c", "8", "-n", "100000000", "-t", "set,get", "-q")
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	// Each scaling, as the status records it: the pods and why.
	type decision struct {
		replicas int32
		at       time.Time
		reason   string
	}
	var decisions []decision
	record := func(k *kvv1.KVStore) {
		a := k.Status.Autoscaling
		if a == nil || a.LastScaleTime == nil || (len(decisions) > 0 && decisions[len(decisions)-1].at.Equal(a.LastScaleTime.Time)) {
			return
		}
		decisions = append(decisions, decision{k.Status.Replicas, a.LastScaleTime.Time, a.Reason})
	}
	waitKV(t, k, "scaled out under load", func(k *kvv1.KVStore) error {
		record(k)
		if k.Status.Replicas != 3 {
			return fmt.Errorf("status.replicas %d", k.Status.Replicas)
		}
		return nil
	})
	waitKV(t, k, "three pods ready", readyWith(3, kvv1.DefaultVersion))
	replicaOf(t, srv["as-1"], srv["as-0"])
	replicaOf(t, srv["as-2"], srv["as-0"])
	cancel()
	_ = load.Wait()

	out := len(decisions)
	waitKV(t, k, "scaled in once idle", func(k *kvv1.KVStore) error {
		record(k)
		if k.Status.Replicas != 1 {
			return fmt.Errorf("status.replicas %d", k.Status.Replicas)
		}
		return nil
	})
	replicas := []int32{1}
	for i, d := range decisions {
		t.Logf("decision %d: %d pods: %s", i+1, d.replicas, d.reason)
		replicas = append(replicas, d.replicas)
		if i > 0 && d.at.Sub(decisions[i-1].at) < 2*time.Second {
			t.Errorf("decision %d came %s after the last, inside the 2s cool-down", i+1, d.at.Sub(decisions[i-1].at))
		}
	}
	// Out under load to the maximum, then in by one pod per decision.
	for i := 1; i < len(replicas); i++ {
		if up := i <= out; (up && replicas[i] <= replicas[i-1]) || (!up && replicas[i] != replicas[i-1]-1) {
			t.Errorf("pods went %v: want rising to 3 under load, then falling one at a time", replicas)
			break
		}
	}
	// The next reconcile applies the decision to the StatefulSet.
	testcluster.Eventually(t, 30*time.Second, "the StatefulSet at one pod", func(ctx context.Context) error {
		s := &appsv1.StatefulSet{}
		if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "as"}, s); err != nil {
			return err
		}
		if *s.Spec.Replicas != 1 {
			return fmt.Errorf("StatefulSet replicas %d", *s.Spec.Replicas)
		}
		return nil
	})
	testcluster.Eventually(t, 10*time.Second, "Autoscaled events", func(ctx context.Context) error {
		evs := &corev1.EventList{}
		if err := kube.List(ctx, evs, client.InNamespace(ns)); err != nil {
			return err
		}
		n := 0
		for _, e := range evs.Items {
			if e.Reason == "Autoscaled" {
				n++
			}
		}
		if n < 3 {
			return fmt.Errorf("%d Autoscaled events", n)
		}
		return nil
	})
}
