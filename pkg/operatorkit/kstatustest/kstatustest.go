package kstatustest

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// TB is the part of testing.TB the assertions use.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
}

// Check returns the kstatus status of obj and an error when it disagrees
// with obj's Ready, Progressing and Degraded conditions:
//
//   - observedGeneration behind metadata.generation → InProgress;
//   - Degraded=True and Stalled=True → Failed;
//   - Progressing=True, or Ready not True → InProgress;
//   - Ready=True → Current.
func Check(obj runtime.Object) (status.Status, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return "", err
	}
	u := &unstructured.Unstructured{Object: m}
	res, err := status.Compute(u)
	if err != nil {
		return "", fmt.Errorf("kstatus cannot read %s: %w", u.GetName(), err)
	}
	conds, _, err := unstructured.NestedSlice(m, "status", "conditions")
	if err != nil {
		return res.Status, err
	}
	var cs []metav1.Condition
	for _, c := range conds {
		var mc metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c.(map[string]any), &mc); err != nil {
			return res.Status, err
		}
		cs = append(cs, mc)
	}
	gen := u.GetGeneration()
	observed, _, _ := unstructured.NestedInt64(m, "status", "observedGeneration")
	is := func(t string) bool { return meta.IsStatusConditionTrue(cs, t) }
	var want status.Status
	switch {
	case u.GetDeletionTimestamp() != nil:
		want = status.TerminatingStatus
	case observed < gen:
		want = status.InProgressStatus
	case is("Degraded") && is("Stalled"):
		want = status.FailedStatus
	case is("Progressing") || !is("Ready"):
		want = status.InProgressStatus
	default:
		want = status.CurrentStatus
	}
	if res.Status != want {
		return res.Status, fmt.Errorf("%s: conditions say %s but kstatus reads %s (%s)", u.GetName(), want, res.Status, res.Message)
	}
	return res.Status, nil
}

// AssertConformance fails t when obj's conditions and kstatus disagree, and
// returns the kstatus status.
func AssertConformance(t TB, obj runtime.Object) status.Status {
	t.Helper()
	st, err := Check(obj)
	if err != nil {
		t.Errorf("kstatus conformance: %v", err)
	}
	return st
}
