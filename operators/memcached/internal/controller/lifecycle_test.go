package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/operators/memcached/api/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit"
	"opctl.dev/opctl/pkg/operatorkit/lifecycle"
)

// wish sets spec.lifecycle.
func wish(t *testing.T, ns, name string, p lifecycle.Phase) {
	t.Helper()
	testcluster.UpdateObject(t, kube, &v1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, func(m *v1alpha1.Memcached) {
		m.Spec.Lifecycle = v1alpha1.MemcachedLifecycle(p)
	})
}

func inPhase(p lifecycle.Phase) func(*v1alpha1.Memcached) error {
	return func(m *v1alpha1.Memcached) error {
		if m.Status.Phase != p {
			return fmt.Errorf("phase %s", m.Status.Phase)
		}
		return testcluster.HasCondition(m.Status.Conditions, operatorkit.ConditionLifecycle, metav1.ConditionTrue, string(p))
	}
}

// TestLifecycleWishedInSpec: Servicing and Stopping are reached from the
// spec and seen live; a wish the graph forbids is refused by the API
// server before any reconcile.
func TestLifecycleWishedInSpec(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "memcached-lifecycle", nil)
	create(t, newMemcached(ns, "m", func(m *v1alpha1.Memcached) { m.Spec.Replicas = 1 }))
	waitMemcached(t, ns, "m", "Memcached Ready", ready)

	wish(t, ns, "m", lifecycle.Servicing)
	waitMemcached(t, ns, "m", "Servicing", inPhase(lifecycle.Servicing))
	wish(t, ns, "m", lifecycle.Running)
	waitMemcached(t, ns, "m", "Running again", inPhase(lifecycle.Running))
	wish(t, ns, "m", lifecycle.Stopping)
	waitMemcached(t, ns, "m", "Ended", inPhase(lifecycle.Ended))
	d := &appsv1.Deployment{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m-server"}, d); err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 0 || d.Status.Replicas != 0 {
		t.Errorf("stopped Memcached's Deployment has %d replicas (%d pods)", *d.Spec.Replicas, d.Status.Replicas)
	}
	// Every phase passed through was recorded as it happened.
	testcluster.WaitEventNotes(t, kube, ns, "m", "PhaseChanged", wait,
		"Running → Servicing", "Servicing → Running", "Running → Stopping", "Stopping → Ended")

	// Stopping is final: the API server refuses a wish to run again.
	m := &v1alpha1.Memcached{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: "m"}, m); err != nil {
		t.Fatal(err)
	}
	m.Spec.Lifecycle = v1alpha1.MemcachedLifecycle(lifecycle.Running)
	err := kube.Update(ctx, m)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "the lifecycle graph forbids this wish") {
		t.Errorf("wishing Running after Stopping: %v, want the CRD's transition rule to refuse it", err)
	}
}

// TestWishWaitsForTheGraph: a wish the current phase cannot reach yet
// waits, and the Lifecycle condition says what for: Servicing is wished
// while the servers never become ready, so the Memcached stays Starting.
func TestWishWaitsForTheGraph(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	const image = "memcached:never-ready"
	remove, err := c.AddStage(ctx, testcluster.NeverReadyStage("memcached-never-ready", image))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remove(context.Background()) })
	ns := c.Namespace(t, "memcached-wish-waits", nil)
	create(t, newMemcached(ns, "m", func(m *v1alpha1.Memcached) {
		m.Spec.Replicas, m.Spec.Image = 1, image
		m.Spec.Lifecycle = v1alpha1.MemcachedLifecycle(lifecycle.Servicing)
	}))
	waitMemcached(t, ns, "m", "the wish waiting", func(m *v1alpha1.Memcached) error {
		cond := meta.FindStatusCondition(m.Status.Conditions, operatorkit.ConditionLifecycle)
		if m.Status.Phase != lifecycle.Starting || cond == nil || cond.Reason != string(lifecycle.Starting) ||
			cond.Message != "wished Servicing: waiting for the application to become available" {
			return fmt.Errorf("phase %s, Lifecycle condition %+v", m.Status.Phase, cond)
		}
		return nil
	})
}
