package resources

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestServiceReady(t *testing.T) {
	tests := []struct {
		name  string
		svc   corev1.Service
		ready bool
	}{
		{"no cluster IP yet", corev1.Service{}, false},
		{"headless", corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}}, true},
		{"load balancer without address", corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1", Type: corev1.ServiceTypeLoadBalancer}}, false},
		{"external name", corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ready, why := ServiceReady(&tt.svc); ready != tt.ready {
				t.Errorf("ready %v (%s), want %v", ready, why, tt.ready)
			}
		})
	}
}

func TestConfigMapHash(t *testing.T) {
	a := &corev1.ConfigMap{Data: map[string]string{"a": "1", "b": "2"}}
	b := &corev1.ConfigMap{Data: map[string]string{"b": "2", "a": "1"}}
	c := &corev1.ConfigMap{Data: map[string]string{"a": "12"}}
	if ConfigMapHash(a) != ConfigMapHash(b) {
		t.Error("hash depends on map order")
	}
	if ConfigMapHash(a) == ConfigMapHash(c) {
		t.Error("different data, same hash")
	}
}

func TestSetSecretPassword(t *testing.T) {
	s := &corev1.Secret{}
	if err := SetSecretPassword(s, "password", 32); err != nil {
		t.Fatal(err)
	}
	other := &corev1.Secret{}
	if err := SetSecretPassword(other, "password", 32); err != nil {
		t.Fatal(err)
	}
	if len(s.Data["password"]) != 32 || string(s.Data["password"]) == string(other.Data["password"]) {
		t.Errorf("passwords %q and %q: want 32 random characters each", s.Data["password"], other.Data["password"])
	}
}

func TestPVCReady(t *testing.T) {
	req := corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}
	pvc := func(phase corev1.PersistentVolumeClaimPhase, capacity string) *corev1.PersistentVolumeClaim {
		p := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: req}}}
		p.Status.Phase = phase
		if capacity != "" {
			p.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
		}
		return p
	}
	tests := []struct {
		name  string
		pvc   *corev1.PersistentVolumeClaim
		ready bool
	}{
		{"pending", pvc(corev1.ClaimPending, ""), false},
		{"bound at size", pvc(corev1.ClaimBound, "2Gi"), true},
		{"expanding", pvc(corev1.ClaimBound, "1Gi"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ready, why := PVCReady(tt.pvc); ready != tt.ready {
				t.Errorf("ready %v (%s), want %v", ready, why, tt.ready)
			}
		})
	}
}

func TestWorkloadReady(t *testing.T) {
	d := &appsv1.Deployment{Status: appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1}}
	if ready, why := DeploymentReady(d); !ready {
		t.Errorf("rolled-out Deployment not ready: %s", why)
	}
	s := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2)}, Status: appsv1.StatefulSetStatus{Replicas: 2, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1}}
	if ready, why := StatefulSetReady(s); ready || why != "1 of 2 replicas ready and updated" {
		t.Errorf("half-ready StatefulSet: ready %v, %q", ready, why)
	}
	if ready, _ := StatefulSetReady(d); ready {
		t.Error("a Deployment passed as a StatefulSet is ready")
	}
}
