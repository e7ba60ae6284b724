package operatorkit_test

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/pkg/operatorkit"
	testv1 "opctl.dev/opctl/pkg/operatorkit/internal/testapi/v1alpha1"
)

// greeter manages one ConfigMap per Widget.
type greeter struct{}

func (greeter) Check(_ context.Context, w *testv1.Widget) error {
	if w.Spec.Message == "" {
		return operatorkit.Terminal("MissingMessage", errors.New("spec.message is required"))
	}
	return nil
}

func (greeter) Build(_ context.Context, w *testv1.Widget) ([]client.Object, error) {
	return []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.Name + "-greeting"}}}, nil
}

func (greeter) Mutate(_ context.Context, w *testv1.Widget, objs []client.Object) error {
	objs[0].(*corev1.ConfigMap).Data = map[string]string{"greeting": w.Spec.Message}
	return nil
}

func (greeter) Status(_ context.Context, _ *testv1.Widget, applied []operatorkit.ApplyResult) (operatorkit.Observation, error) {
	return operatorkit.Observation{Ready: true, Available: true, Message: fmt.Sprintf("%d objects applied", len(applied))}, nil
}

// A Handler's steps for one Widget, called by hand in the order the
// Reconciler calls them. Wired into a manager, the Reconciler also applies
// the built objects with server-side apply, owns them, and writes the
// Observation into status conditions:
//
//	r := operatorkit.New(mgr, "greeter", func() *testv1.Widget { return &testv1.Widget{} }, greeter{}, operatorkit.Options{})
//	err := r.SetupWithManager(mgr, &corev1.ConfigMap{})
func Example() {
	ctx := context.Background()
	h := greeter{}
	w := &testv1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "hello"}}
	w.Spec.Message = "hi"
	if err := h.Check(ctx, w); err != nil {
		fmt.Println("check:", err)
		return
	}
	objs, _ := h.Build(ctx, w)
	_ = h.Mutate(ctx, w, objs)
	cm := objs[0].(*corev1.ConfigMap)
	fmt.Println(cm.Name, cm.Data["greeting"])
	obs, _ := h.Status(ctx, w, []operatorkit.ApplyResult{{}})
	fmt.Println(obs.Ready, obs.Message)
	// Output:
	// hello-greeting hi
	// true 1 objects applied
}

// A check step refuses a spec that cannot work without retrying.
func ExampleTerminal() {
	err := greeter{}.Check(context.Background(), &testv1.Widget{})
	fmt.Println(operatorkit.IsTerminal(err), err)
	// Output: true terminal error: spec.message is required
}
