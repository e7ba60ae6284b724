package operatorkit_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/api/meta"
	"opctl.dev/opctl/internal/testcluster"
	testv1 "opctl.dev/opctl/pkg/operatorkit/internal/testapi/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit/kstatustest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const wait = 60 * time.Second

func createWidget(t *testing.T, ns, name string, mutate func(*testv1.Widget)) *testv1.Widget {
	t.Helper()
	w := &testv1.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	w.Spec.Message = "hello"
	w.Spec.Replicas = 2
	if mutate != nil {
		mutate(w)
	}
	if err := kube.Create(context.Background(), w); err != nil {
		t.Fatalf("creating Widget: %v", err)
	}
	return w
}

func widgetRef(ns, name string) *testv1.Widget {
	return &testv1.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func getWidget(ctx context.Context, ns, name string) (*testv1.Widget, error) {
	w := widgetRef(ns, name)
	return w, kube.Get(ctx, client.ObjectKeyFromObject(w), w)
}

// waitWidget polls the Widget until check passes and returns it.
func waitWidget(t *testing.T, ns, name, what string, check func(*testv1.Widget) error) *testv1.Widget {
	t.Helper()
	w := widgetRef(ns, name)
	testcluster.WaitObject(t, kube, w, wait, what, check)
	return w
}

// updateWidget changes the Widget, retrying on conflicts with the
// reconciler's status writes.
func updateWidget(t *testing.T, ns, name string, mutate func(*testv1.Widget)) {
	t.Helper()
	testcluster.UpdateObject(t, kube, widgetRef(ns, name), mutate)
}

func condition(w *testv1.Widget, typ string) *metav1.Condition {
	return meta.FindStatusCondition(w.Status.Conditions, typ)
}

// hasCondition checks a condition's status and reason ("" for any).
func hasCondition(typ string, status metav1.ConditionStatus, reason string) func(*testv1.Widget) error {
	return func(w *testv1.Widget) error {
		return testcluster.HasCondition(w.Status.Conditions, typ, status, reason)
	}
}

// readyAndObserved waits for Ready=True at the current generation.
func readyAndObserved(w *testv1.Widget) error {
	return testcluster.ReadyAt(w, w.Status.Conditions, w.Status.ObservedGeneration)
}

func assertKstatus(t *testing.T, w *testv1.Widget, want string) {
	t.Helper()
	if got := kstatustest.AssertConformance(t, w); string(got) != want {
		t.Errorf("kstatus = %s, want %s", got, want)
	}
}
