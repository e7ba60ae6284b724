package operatorkit

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	testv1 "opctl.dev/opctl/pkg/operatorkit/internal/testapi/v1alpha1"
)

// planner's scope is the message Check read; every later step records the
// scope it was given.
type planner struct{ seen map[string]string }

func (p *planner) Check(_ context.Context, w *testv1.Widget) (string, error) {
	return w.Spec.Message, nil
}

func (p *planner) Build(_ context.Context, _ *testv1.Widget, s string) ([]client.Object, error) {
	p.seen["build"] = s
	return []client.Object{&corev1.ConfigMap{}}, nil
}

func (p *planner) Mutate(_ context.Context, _ *testv1.Widget, s string, _ []client.Object) error {
	p.seen["mutate"] = s
	return nil
}

func (p *planner) Repair(_ context.Context, _ *testv1.Widget, s string, _ []ApplyResult) error {
	p.seen["repair"] = s
	return nil
}

func (p *planner) Status(_ context.Context, _ *testv1.Widget, s string, _ []ApplyResult) (Observation, error) {
	p.seen["status"] = s
	return Observation{}, nil
}

func TestScopedHandler(t *testing.T) {
	p := &planner{seen: map[string]string{}}
	h := Scoped[*testv1.Widget, string](p)
	run := func(msg string) {
		ctx := withScopeSlot(context.Background())
		w := &testv1.Widget{}
		w.Spec.Message = msg
		if err := h.Check(ctx, w); err != nil {
			t.Fatal(err)
		}
		objs, _ := h.Build(ctx, w)
		_ = h.Mutate(ctx, w, objs)
		_ = h.(Repairer[*testv1.Widget]).Repair(ctx, w, nil)
		_, _ = h.Status(ctx, w, nil)
	}
	for _, msg := range []string{"first", "second"} {
		run(msg)
		for _, step := range []string{"build", "mutate", "repair", "status"} {
			if p.seen[step] != msg {
				t.Errorf("reconcile %q: %s got scope %q", msg, step, p.seen[step])
			}
		}
	}
	// Deletion: Build runs without Check, in a reconcile of its own.
	if _, err := h.Build(withScopeSlot(context.Background()), &testv1.Widget{}); err != nil || p.seen["build"] != "" {
		t.Errorf("Build without Check got scope %q, want the zero value", p.seen["build"])
	}
	if done, err := h.(Finalizing[*testv1.Widget]).Finalize(context.Background(), &testv1.Widget{}, DeletionDelete); !done || err != nil {
		t.Errorf("Finalize of a handler without one = %v, %v; want done", done, err)
	}
}
