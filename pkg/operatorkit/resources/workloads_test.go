package resources

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestStatefulSet(t *testing.T) {
	sts := func(gen, observed int64, replicas int32, st appsv1.StatefulSetStatus) *appsv1.StatefulSet {
		st.ObservedGeneration = observed
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: gen}, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(replicas)}, Status: st}
	}
	tests := []struct {
		name      string
		s         *appsv1.StatefulSet
		rolledOut bool
		available bool
	}{
		{"rolled out", sts(2, 2, 3, appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, CurrentReplicas: 3, CurrentRevision: "r2", UpdateRevision: "r2"}), true, true},
		{"generation not observed", sts(3, 2, 3, appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, CurrentReplicas: 3, CurrentRevision: "r2", UpdateRevision: "r2"}), false, true},
		{"mid rollout", sts(2, 2, 3, appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 2, AvailableReplicas: 2, CurrentReplicas: 2, UpdatedReplicas: 1, CurrentRevision: "r1", UpdateRevision: "r2"}), false, true},
		{"nothing ready", sts(1, 1, 1, appsv1.StatefulSetStatus{Replicas: 1}), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := StatefulSet(tt.s)
			if r.RolledOut() != tt.rolledOut || r.AnyAvailable() != tt.available {
				t.Errorf("%+v: RolledOut=%v AnyAvailable=%v, want %v %v", r, r.RolledOut(), r.AnyAvailable(), tt.rolledOut, tt.available)
			}
		})
	}
}

func TestDeployment(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Status: appsv1.DeploymentStatus{
		ObservedGeneration: 1, Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1}}
	if r := Deployment(d); !r.RolledOut() || r.Desired != 1 {
		t.Errorf("default single replica deployment not rolled out: %+v", r)
	}
	d.Spec.Replicas = ptr.To[int32](2)
	if r := Deployment(d); r.RolledOut() {
		t.Errorf("1 of 2 replicas counted as rolled out: %+v", r)
	}
}
