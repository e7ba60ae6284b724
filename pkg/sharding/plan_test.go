package sharding

import (
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestPlan(t *testing.T) {
	live := []string{"a", "b"}
	ring := NewRing(live)
	// Names the ring gives to a and to b.
	var ofA, ofB string
	for _, k := range keys(100) {
		switch ring.Owner(k) {
		case "a":
			ofA = k
		case "b":
			ofB = k
		}
	}
	tests := []struct {
		name string
		obj  Object
		live []string
		want []Change
	}{
		{"unassigned", Object{Name: ofA}, live, []Change{{Name: ofA, To: "a"}}},
		{"on its shard", Object{Name: ofA, Shard: "a"}, live, nil},
		{"on another live shard: drain", Object{Name: ofA, Shard: "b"}, live, []Change{{Name: ofA, Drain: true}}},
		{"draining: left to its shard", Object{Name: ofA, Shard: "b", Draining: true}, live, nil},
		{"released after a drain", Object{Name: ofB, Draining: true}, live, []Change{{Name: ofB, To: "b"}}},
		{"shard gone: moved at once", Object{Name: ofB, Shard: "c"}, live, []Change{{Name: ofB, To: "b"}}},
		{"shard gone while draining", Object{Name: ofB, Shard: "c", Draining: true}, live, []Change{{Name: ofB, To: "b"}}},
		{"no live shard", Object{Name: ofA, Shard: "c"}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Plan([]Object{tc.obj}, NewRing(tc.live), tc.live)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Plan = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestMembers(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	lease := func(name, holder string, renewed time.Duration) coordinationv1.Lease {
		l := coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](15), RenewTime: &metav1.MicroTime{Time: now.Add(-renewed)}}}
		if holder != "" {
			l.Spec.HolderIdentity = &holder
		}
		return l
	}
	live, next := Members([]coordinationv1.Lease{
		lease("c", "c", 2*time.Second),
		lease("a", "a", 10*time.Second),
		lease("expired", "expired", 20*time.Second),
		lease("released", "", time.Second),
		lease("other", "someone-else", time.Second),
	}, now)
	if !slices.Equal(live, []string{"a", "c"}) {
		t.Errorf("live = %v, want [a c]", live)
	}
	if want := now.Add(5 * time.Second); !next.Equal(want) {
		t.Errorf("next = %v, want %v (a's expiry)", next, want)
	}
	if live, next := Members(nil, now); live != nil || !next.IsZero() {
		t.Errorf("no Leases: %v %v", live, next)
	}
}
