package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit/kstatustest"
)

const wait = 90 * time.Second

// restricted labels a namespace for the restricted Pod Security level, so
// every KVStore test also proves the pods comply.
var restricted = map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}

func newKVStore(ns, name string, replicas int32) *kvv1.KVStore {
	k := &kvv1.KVStore{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{suiteLabel: "controller"}}}
	k.Spec.Replicas = ptr.To(replicas)
	k.Spec.Config = map[string]string{"maxmemory": "64mb"}
	return k
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := kube.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func waitKV(t *testing.T, k *kvv1.KVStore, what string, check func(*kvv1.KVStore) error) {
	t.Helper()
	testcluster.WaitObject(t, kube, k, wait, what, check)
}

func ready(k *kvv1.KVStore) error {
	return testcluster.ReadyAt(k, k.Status.Conditions, k.Status.ObservedGeneration)
}

func readyWith(replicas int32, version string) func(*kvv1.KVStore) error {
	return func(k *kvv1.KVStore) error {
		if err := ready(k); err != nil {
			return err
		}
		if k.Status.ReadyReplicas != replicas || k.Status.CurrentVersion != version {
			return fmt.Errorf("readyReplicas %d version %q, want %d %q", k.Status.ReadyReplicas, k.Status.CurrentVersion, replicas, version)
		}
		return nil
	}
}

func conditionIs(typ string, status metav1.ConditionStatus, reason string) func(*kvv1.KVStore) error {
	return func(k *kvv1.KVStore) error { return testcluster.HasCondition(k.Status.Conditions, typ, status, reason) }
}

func assertKstatus(t *testing.T, k *kvv1.KVStore, want string) {
	t.Helper()
	if got := kstatustest.AssertConformance(t, k); string(got) != want {
		t.Errorf("kstatus = %s, want %s", got, want)
	}
}

func get(t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatalf("reading %T %s: %v", obj, name, err)
	}
}

// podImages maps each pod of the KVStore to its image and readiness.
func podImages(t *testing.T, k *kvv1.KVStore) map[string]string {
	t.Helper()
	pods := &corev1.PodList{}
	if err := kube.List(context.Background(), pods, client.InNamespace(k.Namespace),
		client.MatchingLabels{"app.kubernetes.io/instance": k.Name}); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		ready := "NotReady"
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready = "Ready"
			}
		}
		out[p.Name] = p.Spec.Containers[0].Image + " " + ready
	}
	return out
}

func statefulSet(t *testing.T, k *kvv1.KVStore) *appsv1.StatefulSet {
	t.Helper()
	s := &appsv1.StatefulSet{}
	get(t, k.Namespace, k.Name, s)
	return s
}

// runningStore creates a KVStore with replicas in a new restricted
// namespace named from prefix and waits until it is Ready.
func runningStore(t *testing.T, prefix, name string, replicas int32) (*testcluster.Cluster, *kvv1.KVStore) {
	t.Helper()
	c := testcluster.Require(t, cluster)
	k := newKVStore(c.Namespace(t, prefix, restricted), name, replicas)
	create(t, k)
	waitKV(t, k, "KVStore Ready", readyWith(replicas, kvv1.DefaultVersion))
	return c, k
}
