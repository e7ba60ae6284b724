package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/operators/sample/internal/instance"
)

// scripted is a Manager whose primary answers as the test says.
type scripted struct {
	primaryUp bool
	promoted  []string
}

func (m *scripted) Status(_ context.Context, t instance.Target) (instance.Status, error) {
	if t.Addr == "db-0:6379" {
		if !m.primaryUp {
			return instance.Status{}, errors.New("connection refused")
		}
		return instance.Status{Role: "master"}, nil
	}
	return instance.Status{Role: "slave", MasterHost: "db-0", MasterPort: 6379, LinkUp: true, Offset: 10}, nil
}

func (m *scripted) Promote(_ context.Context, t instance.Target) error {
	m.promoted = append(m.promoted, t.Addr)
	return nil
}

func (m *scripted) Follow(context.Context, instance.Target, string, int) error { return nil }

// TestFailoverTimesAnUnbrokenOutage: a blip that ended, even while the
// status read from the cache still shows it, does not count toward
// spec.failover.after of a later outage.
func TestFailoverTimesAnUnbrokenOutage(t *testing.T) {
	scheme := unitScheme(t)
	k := &kvv1.KVStore{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"}}
	k.Spec.Failover.After = &metav1.Duration{Duration: 10 * time.Second}
	var pods []corev1.Pod
	for _, n := range []string{"db-0", "db-1"} {
		pods = append(pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n}})
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db-auth"}, Data: map[string][]byte{"password": []byte("pw")}}
	m := &scripted{}
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	h := &Handler{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret).Build(), Now: func() time.Time { return now },
		DataPath: &DataPath{Manager: m, Address: func(_ *kvv1.KVStore, pod string) string { return pod + ":6379" }}}
	step := func(up bool, advance time.Duration, status *kvv1.KVStore) {
		t.Helper()
		now = now.Add(advance)
		m.primaryUp = up
		if err := h.reconcileServers(context.Background(), status, pods); err != nil {
			t.Fatal(err)
		}
	}
	step(false, 0, k)                 // a blip at 0s
	stale := k.DeepCopy()             // the cache still shows it
	step(true, time.Second, k)        // over at 1s
	step(false, 8*time.Second, stale) // a real outage from 9s, read through the stale status
	step(false, 8*time.Second, stale) // 17s: 8s into the outage, 17s after the blip
	if len(m.promoted) != 0 {
		t.Fatalf("promoted %v 8s into an outage, with spec.failover.after 10s", m.promoted)
	}
	step(false, 3*time.Second, stale) // 11s into the outage
	if len(m.promoted) != 1 || stale.Status.Primary != "db-1" {
		t.Errorf("promoted %v, primary %q; want db-1 once the outage passed 10s", m.promoted, stale.Status.Primary)
	}
}
