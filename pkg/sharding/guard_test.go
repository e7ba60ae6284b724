package sharding

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestGuard(t *testing.T) {
	const ring, me = "r", "shard-a"
	tests := []struct {
		name       string
		labels     map[string]string
		wantInner  bool
		wantLabels map[string]string // after the reconcile
	}{
		{"own object", map[string]string{ShardLabel(ring): me, "x": "1"}, true, map[string]string{ShardLabel(ring): me, "x": "1"}},
		{"another shard's", map[string]string{ShardLabel(ring): "shard-b"}, false, map[string]string{ShardLabel(ring): "shard-b"}},
		{"unassigned", nil, false, nil},
		{"draining: released", map[string]string{ShardLabel(ring): me, DrainLabel(ring): "true", "x": "1"}, false, map[string]string{"x": "1"}},
		{"another shard's drain is left alone", map[string]string{ShardLabel(ring): "shard-b", DrainLabel(ring): "true"}, false, map[string]string{ShardLabel(ring): "shard-b", DrainLabel(ring): "true"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: "ns", Labels: tc.labels}}
			c := fake.NewClientBuilder().WithObjects(obj).Build()
			traced := 0
			g := &Guard{ring: ring, id: me, client: c, newObject: func() client.Object { return &corev1.ConfigMap{} },
				trace: func(string, time.Time, time.Time) { traced++ }}
			ran := false
			inner := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				ran = true
				return reconcile.Result{}, nil
			})
			if _, err := g.Wrap(inner).Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "o"}}); err != nil {
				t.Fatal(err)
			}
			if ran != tc.wantInner || traced != map[bool]int{true: 1}[tc.wantInner] {
				t.Errorf("inner ran %v, traced %d; want ran %v", ran, traced, tc.wantInner)
			}
			got := &corev1.ConfigMap{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
				t.Fatal(err)
			}
			if len(got.Labels) != len(tc.wantLabels) {
				t.Fatalf("labels %v, want %v", got.Labels, tc.wantLabels)
			}
			for k, v := range tc.wantLabels {
				if got.Labels[k] != v {
					t.Errorf("labels %v, want %v", got.Labels, tc.wantLabels)
				}
			}
		})
	}
}

// A release whose resourceVersion is stale fails: the object changed
// after the shard saw the drain.
func TestReleaseStale(t *testing.T) {
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: "ns", Labels: map[string]string{ShardLabel("r"): "a", DrainLabel("r"): "true"}}}
	c := fake.NewClientBuilder().WithObjects(obj).Build()
	g := &Guard{ring: "r", id: "a", client: c}
	stale := obj.DeepCopy()
	stale.ResourceVersion = "1"
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	obj.Labels["y"] = "2"
	if err := c.Update(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	if err := g.release(context.Background(), stale); !apierrors.IsConflict(err) {
		t.Errorf("a release with a stale resourceVersion: %v, want a conflict", err)
	}
}
