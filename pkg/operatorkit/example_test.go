package operatorkit_test

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
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

// A Handler wired into a manager: the Reconciler does the rest.
func Example() {
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{})
	if err != nil {
		panic(err)
	}
	r := operatorkit.New(mgr, "greeter", func() *testv1.Widget { return &testv1.Widget{} }, greeter{}, operatorkit.Options{})
	if err := r.SetupWithManager(mgr, &corev1.ConfigMap{}); err != nil {
		panic(err)
	}
	_ = mgr.Start(ctrl.SetupSignalHandler())
}

// A check step refuses a spec that cannot work without retrying.
func ExampleTerminal() {
	err := greeter{}.Check(context.Background(), &testv1.Widget{})
	fmt.Println(operatorkit.IsTerminal(err), err)
	// Output: true terminal error: spec.message is required
}
