package operatorkit

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestKeepInitial(t *testing.T) {
	tests := []struct {
		name       string
		initial    *corev1.Secret
		live       *corev1.Secret
		wantData   map[string]string
		wantLabels map[string]string
	}{
		{
			name:     "generated password kept, other keys untouched",
			initial:  &corev1.Secret{Data: map[string][]byte{"password": []byte("new")}},
			live:     &corev1.Secret{Data: map[string][]byte{"password": []byte("old"), "user": []byte("u")}},
			wantData: map[string]string{"password": "old"},
		},
		{
			name:     "a key live lacks keeps the new value",
			initial:  &corev1.Secret{Data: map[string][]byte{"password": []byte("new")}},
			live:     &corev1.Secret{Data: map[string][]byte{"user": []byte("u")}},
			wantData: map[string]string{"password": "new"},
		},
		{
			name:       "metadata is not data",
			initial:    &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "new"}}},
			live:       &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "old"}}},
			wantLabels: map[string]string{"a": "new"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := keepInitial(tt.initial, tt.live); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for k, v := range tt.initial.Data {
				got[k] = string(v)
			}
			if len(got) != len(tt.wantData) {
				t.Errorf("data %v, want %v", got, tt.wantData)
			}
			for k, v := range tt.wantData {
				if got[k] != v {
					t.Errorf("data %v, want %v", got, tt.wantData)
				}
			}
			for k, v := range tt.wantLabels {
				if tt.initial.Labels[k] != v {
					t.Errorf("labels %v, want %v", tt.initial.Labels, tt.wantLabels)
				}
			}
		})
	}
}

func TestKeepInitialListsWhole(t *testing.T) {
	initial := &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "main", Port: 80}}}}
	live := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.0.0.1", Ports: []corev1.ServicePort{{Name: "main", Port: 80, TargetPort: intstr.FromInt32(80)}}}}
	if err := keepInitial(initial, live); err != nil {
		t.Fatal(err)
	}
	if initial.Spec.Ports[0].TargetPort.IntVal != 80 || initial.Spec.ClusterIP != "" {
		t.Errorf("spec %+v: want live's ports and no field InitialData did not set", initial.Spec)
	}
}

func TestRestrict(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "n", "namespace": "ns", "labels": map[string]any{"a": "b"}},
		"data":     map[string]any{"k": "v"},
	}
	got := restrict(obj, []string{"data"})
	if _, ok := got["metadata"].(map[string]any)["labels"]; ok {
		t.Errorf("labels outside the paths kept: %v", got)
	}
	if got["data"] == nil || got["metadata"].(map[string]any)["name"] != "n" {
		t.Errorf("paths or identity lost: %v", got)
	}
	if all := restrict(obj, nil); len(all) != len(obj) {
		t.Errorf("no paths should keep everything: %v", all)
	}
}
