package controller

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

// TestStaleRolloutKeepsTheGoodConfig: a StatefulSet read from the cache
// before this reconcile's apply shows the last config rolled out. That
// rollout must not make the new spec.config the good one, or a config that
// then crash-loops could never be rolled back.
func TestStaleRolloutKeepsTheGoodConfig(t *testing.T) {
	scheme := unitScheme(t)
	k := &kvv1.KVStore{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", Generation: 2}}
	k.Spec.Version = kvv1.DefaultVersion
	k.Spec.Replicas = ptr.To[int32](2)
	k.Status.CurrentVersion = kvv1.DefaultVersion
	k.Status.Config = &kvv1.ConfigStatus{Good: map[string]string{"maxclients": "100"}}
	k.Spec.Config = map[string]string{"maxclients": "not-a-number"}

	cases := map[string]struct {
		rolledOut map[string]string // the config of the StatefulSet read
		wantGood  string
	}{
		"stale: the old config rolled out": {map[string]string{"maxclients": "100"}, "100"},
		"fresh: the new config rolled out": {k.Spec.Config, "not-a-number"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			k := k.DeepCopy()
			read := k.DeepCopy()
			read.Spec.Config = tc.rolledOut
			s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: namesOf(k).sts, Generation: 1}}
			s.Spec.Replicas = ptr.To[int32](2)
			s.Spec.Template.Labels = map[string]string{"app.kubernetes.io/version": kvv1.DefaultVersion}
			s.Spec.Template.Annotations = map[string]string{configSumKey: sha(renderConfig(read))}
			s.Status = appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
				UpdatedReplicas: 2, CurrentReplicas: 2, CurrentRevision: "r1", UpdateRevision: "r1"}
			h := &Handler{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(s).Build()}
			o, err := h.Status(context.Background(), k, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := k.Status.Config.Good["maxclients"]; got != tc.wantGood {
				t.Errorf("good config maxclients %q, want %q (observation %+v)", got, tc.wantGood, o)
			}
		})
	}
}
