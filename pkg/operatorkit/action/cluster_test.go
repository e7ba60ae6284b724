package action_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/operatorkit/action"
	"opctl.dev/opctl/pkg/operatorkit/kitapi"
)

// failImage is an image whose pods kwok fails with the termination
// message of the pod's annotation failMessage.
const (
	failImage   = "operatorkit.test/fail:1"
	failMessage = "operatorkit.test/message"
)

// reconcileUntil calls Run as a reconcile would, keeping the status, until
// done accepts it.
func reconcileUntil(t *testing.T, r *action.Runner, owner client.Object, a action.Action, what string, done func(kitapi.ActionStatus) error) kitapi.ActionStatus {
	t.Helper()
	var last *kitapi.ActionStatus
	testcluster.Eventually(t, 2*time.Minute, what, func(ctx context.Context) error {
		st, err := r.Run(ctx, owner, a, last)
		if err != nil {
			return err
		}
		last = &st
		return done(st)
	})
	return *last
}

func phase(want kitapi.ActionPhase) func(kitapi.ActionStatus) error {
	return func(st kitapi.ActionStatus) error {
		if st.Phase != want {
			return fmt.Errorf("phase %s (%s), want %s", st.Phase, st.Message, want)
		}
		return nil
	}
}

// newOwner makes a ConfigMap in a namespace of its own to own the Jobs.
func newOwner(t *testing.T, c *testcluster.Cluster) *corev1.ConfigMap {
	t.Helper()
	o := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace(t, "action", nil), Name: "store"}}
	if err := kube.Create(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o
}

func pod(image string, annotations map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "run", Image: image}}}}
}

// An action runs to success; the TTL controller removes its Job, and the
// kept status stops it from running again.
func TestActionSucceedsAndIsCleanedUp(t *testing.T) {
	c := testcluster.Require(t, cluster)
	r := &action.Runner{Client: kube, Scheme: newScheme()}
	o := newOwner(t, c)
	a := action.Action{Name: "backup", Key: "b1", Template: pod("kv:1", nil), TTL: time.Second}
	st := reconcileUntil(t, r, o, a, "backup Succeeded", phase(kitapi.ActionSucceeded))
	if st.Attempts != 1 || st.StartTime == nil || st.CompletionTime == nil {
		t.Errorf("status %+v", st)
	}
	testcluster.Eventually(t, time.Minute, "the finished Job deleted by its TTL", func(ctx context.Context) error {
		if err := kube.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: st.Job}, &batchv1.Job{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("Job %s: %v", st.Job, err)
		}
		return nil
	})
	again, err := r.Run(context.Background(), o, a, &st)
	if err != nil || again.Phase != kitapi.ActionSucceeded {
		t.Fatalf("after cleanup: %+v, %v", again, err)
	}
	if err := kube.Get(context.Background(), client.ObjectKey{Namespace: o.Namespace, Name: st.Job}, &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Errorf("the finished action ran again: %v", err)
	}
}

// A failing action is retried with backoff by the Job controller, then
// fails with the pod's termination message.
func TestActionFailsWithTheTerminationMessage(t *testing.T) {
	c := testcluster.Require(t, cluster)
	remove, err := c.AddStage(context.Background(), testcluster.FailedPodStage("operatorkit-action-fail", failImage, failMessage))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remove(context.Background()) })
	r := &action.Runner{Client: kube, Scheme: newScheme()}
	o := newOwner(t, c)
	a := action.Action{Name: "restore", Template: pod(failImage, map[string]string{failMessage: "backup kv-0 checksum mismatch"}), Retries: 1}
	st := reconcileUntil(t, r, o, a, "restore Failed", phase(kitapi.ActionFailed))
	if st.Message != "backup kv-0 checksum mismatch (BackoffLimitExceeded)" || st.Attempts != 2 {
		t.Errorf("failed action: message %q after %d attempts; want the termination message after 2 attempts", st.Message, st.Attempts)
	}
	if st.Key != "0" {
		t.Errorf("key %q, want the owner's generation", st.Key)
	}
}

// An action bounded by a deadline that its pod cannot meet (it is never
// scheduled) is Pending, then Failed.
func TestActionDeadline(t *testing.T) {
	c := testcluster.Require(t, cluster)
	r := &action.Runner{Client: kube, Scheme: newScheme()}
	o := newOwner(t, c)
	tmpl := pod("kv:1", nil)
	tmpl.Spec.NodeSelector = map[string]string{"operatorkit.test/no-such-node": "true"}
	a := action.Action{Name: "failover", Template: tmpl, Deadline: 3 * time.Second}
	st, err := r.Run(context.Background(), o, a, nil)
	if err != nil || st.Phase != kitapi.ActionPending {
		t.Fatalf("a pod that cannot be scheduled: %+v, %v; want Pending", st, err)
	}
	st = reconcileUntil(t, r, o, a, "failover Failed", phase(kitapi.ActionFailed))
	if !strings.HasPrefix(st.Message, "DeadlineExceeded") {
		t.Errorf("message %q, want DeadlineExceeded", st.Message)
	}
}
