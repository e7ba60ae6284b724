package operatorkit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	testv1 "opctl.dev/opctl/pkg/operatorkit/internal/testapi/v1alpha1"
	"opctl.dev/opctl/pkg/operatorkit/kstatustest"
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

func getWidget(ctx context.Context, ns, name string) (*testv1.Widget, error) {
	w := &testv1.Widget{}
	return w, kube.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, w)
}

// waitWidget polls the Widget until check passes and returns it.
func waitWidget(t *testing.T, ns, name, what string, check func(*testv1.Widget) error) *testv1.Widget {
	t.Helper()
	var w *testv1.Widget
	testcluster.Eventually(t, wait, what, func(ctx context.Context) error {
		var err error
		if w, err = getWidget(ctx, ns, name); err != nil {
			return err
		}
		return check(w)
	})
	return w
}

func condition(w *testv1.Widget, typ string) *metav1.Condition {
	return meta.FindStatusCondition(w.Status.Conditions, typ)
}

// hasCondition checks a condition's status and reason ("" for any).
func hasCondition(typ string, status metav1.ConditionStatus, reason string) func(*testv1.Widget) error {
	return func(w *testv1.Widget) error {
		c := condition(w, typ)
		if c == nil || c.Status != status || (reason != "" && c.Reason != reason) {
			return fmt.Errorf("condition %s = %+v, want %s/%s", typ, c, status, reason)
		}
		return nil
	}
}

// readyAndObserved waits for Ready=True at the current generation.
func readyAndObserved(w *testv1.Widget) error {
	if err := hasCondition("Ready", metav1.ConditionTrue, "")(w); err != nil {
		return err
	}
	if w.Status.ObservedGeneration != w.Generation {
		return fmt.Errorf("observedGeneration %d, generation %d", w.Status.ObservedGeneration, w.Generation)
	}
	return nil
}

func assertKstatus(t *testing.T, w *testv1.Widget, want string) {
	t.Helper()
	if got := kstatustest.AssertConformance(t, w); string(got) != want {
		t.Errorf("kstatus = %s, want %s", got, want)
	}
}

// updateWidget changes the Widget's spec, retrying on conflicts with the
// reconciler's status writes.
func updateWidget(t *testing.T, ns, name string, mutate func(*testv1.Widget)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w, err := getWidget(context.Background(), ns, name)
		if err != nil {
			return err
		}
		mutate(w)
		return kube.Update(context.Background(), w)
	})
	if err != nil {
		t.Fatalf("updating Widget: %v", err)
	}
}
