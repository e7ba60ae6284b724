package controller_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"opctl.dev/opctl/internal/testcluster"
	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/operators/sample/internal/controller"
	"opctl.dev/opctl/operators/sample/internal/instance"
	"opctl.dev/opctl/operators/sample/internal/instance/instancetest"
)

// TestFailover runs a three-pod store whose pods' servers are real
// processes: the operator sets up replication, labels the roles the
// Services select, and when the primary is killed promotes the most
// advanced replica after spec.failover.after, with no acknowledged write
// lost; a replica pointed away is brought back.
func TestFailover(t *testing.T) {
	c := testcluster.Require(t, cluster)
	ctx := context.Background()
	ns := c.Namespace(t, "kv-failover", restricted)
	srv := serveStore(t, ns, "fo", 3)
	k := dataPathStore(ns, "fo", 3)
	k.Spec.Failover.After = &metav1.Duration{Duration: 3 * time.Second}
	create(t, k)
	waitKV(t, k, "KVStore Ready", readyWith(3, kvv1.DefaultVersion))

	replicaOf(t, srv["fo-1"], srv["fo-0"])
	replicaOf(t, srv["fo-2"], srv["fo-0"])
	wantRoles := map[string]string{"fo-0": controller.RolePrimary, "fo-1": controller.RoleReplica, "fo-2": controller.RoleReplica}
	testcluster.Eventually(t, 30*time.Second, "role labels", func(context.Context) error {
		if got := podRoles(t, k); fmt.Sprint(got) != fmt.Sprint(wantRoles) {
			return fmt.Errorf("roles %v", got)
		}
		return nil
	})
	for svc, role := range map[string]string{"fo": controller.RolePrimary, "fo-ro": controller.RoleReplica} {
		s := &corev1.Service{}
		get(t, ns, svc, s)
		if s.Spec.Selector[controller.RoleLabel] != role || s.Spec.Selector["app.kubernetes.io/instance"] != "fo" {
			t.Errorf("Service %s selects %v, want the %s pods of fo", svc, s.Spec.Selector, role)
		}
	}

	conn, err := instance.Dial(ctx, srv["fo-0"].Target(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	acked := map[string]string{}
	for i := range 200 {
		key, val := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		if _, err := conn.Do("SET", key, val); err != nil {
			t.Fatal(err)
		}
		if n, _ := conn.Do("WAIT", "1", "2000"); n.(int64) >= 1 {
			acked[key] = val
		}
	}
	conn.Close()

	// The replicas caught up before the kill; afterwards their offsets
	// are frozen, and the most advanced one (the lower name on a tie) is
	// the one to promote.
	offsets(t, srv["fo-0"], srv["fo-1"], srv["fo-2"])
	stop := phases(t, k)
	srv["fo-0"].Kill()
	start := time.Now()
	next, other := "fo-1", "fo-2"
	if off := offsets(t, nil, srv["fo-1"], srv["fo-2"]); off[1] > off[0] {
		next, other = other, next
	}
	waitKV(t, k, "failover to "+next, func(k *kvv1.KVStore) error {
		if k.Status.Primary != next || k.Status.Failover == nil || k.Status.Failover.Count != 1 {
			return fmt.Errorf("primary %s failover %+v", k.Status.Primary, k.Status.Failover)
		}
		return ready(k)
	})
	took := time.Since(start)
	time.Sleep(500 * time.Millisecond)
	seen := stop()
	// The operator's clock starts at its first failed read, which on a
	// loaded machine can be a slow read just before the kill.
	promoted := eventTime(t, ns, "fo", "FailedOver", time.Time{})
	waited := promoted.Sub(eventTime(t, ns, "fo", "PrimaryLost", promoted))
	t.Logf("failover: primary fo-0 killed, %s promoted %s later, %s after the operator first failed to read it (spec.failover.after 3s); phases seen: %v",
		next, took.Round(100*time.Millisecond), waited.Round(100*time.Millisecond), seen)
	if waited < 3*time.Second {
		t.Errorf("promoted %s after the primary was found lost, before spec.failover.after", waited)
	}
	if !slices.Contains(seen, "Servicing/"+controller.ReasonFailingOver) || !strings.HasPrefix(seen[len(seen)-1], "Running/") {
		t.Errorf("phases %v, want Servicing/%s during the failover and Running after", seen, controller.ReasonFailingOver)
	}
	if f := k.Status.Failover; f.From != "fo-0" || f.To != next || f.LastTime == nil || f.PrimaryLostSince != nil {
		t.Errorf("failover status %+v", f)
	}

	replicaOf(t, srv[other], srv[next])
	for _, pod := range []string{next, other} {
		lost := instancetest.Missing(acked, instancetest.Keys(t, srv[pod], "k", len(acked)))
		t.Logf("%s after the failover: %d of %d acknowledged writes present", pod, len(acked)-lost, len(acked))
		if len(acked) != 200 || lost != 0 {
			t.Errorf("%s lost %d of %d acknowledged writes", pod, lost, len(acked))
		}
	}
	wantRoles = map[string]string{"fo-0": controller.RoleReplica, next: controller.RolePrimary, other: controller.RoleReplica}
	testcluster.Eventually(t, 30*time.Second, "role labels after the failover", func(ctx context.Context) error {
		if got := podRoles(t, k); fmt.Sprint(got) != fmt.Sprint(wantRoles) {
			return fmt.Errorf("roles %v", got)
		}
		cm := &corev1.ConfigMap{}
		get(t, ns, "fo-config", cm)
		if cm.Data["primary"] != next {
			return fmt.Errorf("the ConfigMap names %q as primary for restarts", cm.Data["primary"])
		}
		return hasEvent(ctx, ns, "fo", "FailedOver")
	})

	// Remediation: a replica pointed at a server that is gone is brought
	// back to the primary.
	if err := resp.Follow(ctx, srv[other].Target(), "127.0.0.1", instancetest.FreePort(t)); err != nil {
		t.Fatal(err)
	}
	replicaOf(t, srv[other], srv[next])
	testcluster.Eventually(t, 10*time.Second, "ReplicaRepointed event", func(ctx context.Context) error {
		return hasEvent(ctx, ns, "fo", "ReplicaRepointed")
	})
}

// offsets waits until the replicas have processed the primary's whole
// stream (with primary nil, until their offsets hold still) and returns
// their offsets.
func offsets(t *testing.T, primary *instancetest.Server, replicas ...*instancetest.Server) []int64 {
	t.Helper()
	var out []int64
	testcluster.Eventually(t, 30*time.Second, "replication offsets", func(ctx context.Context) error {
		read := func() ([]int64, error) {
			var offs []int64
			for _, s := range replicas {
				st, err := resp.Status(ctx, s.Target())
				if err != nil {
					return nil, err
				}
				offs = append(offs, st.Offset)
			}
			return offs, nil
		}
		first, err := read()
		if err != nil {
			return err
		}
		var want []int64
		if primary != nil {
			st, err := resp.Status(ctx, primary.Target())
			if err != nil {
				return err
			}
			want = slices.Repeat([]int64{st.Offset}, len(replicas))
		} else {
			time.Sleep(500 * time.Millisecond)
			if want, err = read(); err != nil {
				return err
			}
		}
		if !slices.Equal(first, want) {
			return fmt.Errorf("offsets %v, want %v", first, want)
		}
		out = first
		return nil
	})
	return out
}

// eventTime is when the object's last Event with reason was recorded,
// before the time before unless it is zero.
func eventTime(t *testing.T, ns, name, reason string, before time.Time) time.Time {
	t.Helper()
	evs := &corev1.EventList{}
	if err := kube.List(context.Background(), evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var at time.Time
	for _, e := range evs.Items {
		et := e.EventTime.Time
		if e.InvolvedObject.Name == name && e.Reason == reason && et.After(at) && (before.IsZero() || !et.After(before)) {
			at = et
		}
	}
	if at.IsZero() {
		t.Fatalf("no %s event on %s", reason, name)
	}
	return at
}

// TestDeletionPhases deletes a running store and watches it go through
// Stopping, then Ended before its finalizer is removed.
func TestDeletionPhases(t *testing.T) {
	_, k := runningStore(t, "kv-delete-phases", "del", 2)
	stop := phases(t, k)
	if err := kube.Delete(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, wait, "the KVStore gone", func(ctx context.Context) error {
		if err := kube.Get(ctx, client.ObjectKeyFromObject(k), &kvv1.KVStore{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("still there: %v", err)
		}
		return nil
	})
	seen := stop()
	t.Logf("phases seen while deleting: %v", seen)
	stopping, ended := slices.IndexFunc(seen, func(s string) bool { return strings.HasPrefix(s, "Stopping/") }),
		slices.IndexFunc(seen, func(s string) bool { return strings.HasPrefix(s, "Ended/") })
	if stopping < 0 || ended < stopping {
		t.Errorf("phases %v, want Stopping and then Ended", seen)
	}
}
