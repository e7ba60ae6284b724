package tenancy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func rl(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

func TestComputeQuota(t *testing.T) {
	operator := Workload{Name: "deployment/kv-manager", Replicas: 1, Requests: rl("cpu", "10m", "memory", "64Mi"), Limits: rl("cpu", "500m", "memory", "256Mi")}
	kv := func(instances int64) Operand {
		return Operand{CRD: "kvstores.kv.opctl.dev", Instances: instances, Replicas: 1,
			Requests: rl("cpu", "100m", "memory", "128Mi"), Limits: rl("cpu", "500m", "memory", "256Mi")}
	}
	stored := kv(2)
	stored.Replicas = 3
	size := resource.MustParse("1Gi")
	stored.Storage = &size
	tests := []struct {
		name string
		in   QuotaInput
		want map[string]string
		why  string // a substring of the derivation
	}{
		{"operator only", QuotaInput{Workloads: []Workload{operator}},
			map[string]string{"requests.cpu": "10m", "requests.memory": "64Mi", "limits.cpu": "500m", "limits.memory": "256Mi", "pods": "1"},
			"requests.cpu = deployment/kv-manager 1×10m = 10m, +0% headroom = 10m"},
		{"three instances", QuotaInput{Workloads: []Workload{operator}, Operands: []Operand{kv(3)}},
			map[string]string{"requests.cpu": "310m", "requests.memory": "448Mi", "limits.cpu": "2", "limits.memory": "1Gi", "pods": "4", "count/kvstores.kv.opctl.dev": "3"},
			"count/kvstores.kv.opctl.dev = instances 3"},
		{"headroom rounds up", QuotaInput{Workloads: []Workload{operator}, Operands: []Operand{kv(3)}, HeadroomPercent: 20},
			map[string]string{"requests.cpu": "372m", "requests.memory": "538Mi", "limits.cpu": "2400m", "limits.memory": "1229Mi", "pods": "4"},
			"+20% headroom = 372m"},
		{"replicas and storage", QuotaInput{Operands: []Operand{stored}},
			map[string]string{"requests.cpu": "600m", "pods": "6", "persistentvolumeclaims": "6", "requests.storage": "6Gi", "count/kvstores.kv.opctl.dev": "2"},
			"requests.storage = kvstores.kv.opctl.dev 6×1Gi = 6Gi"},
		{"zero instances", QuotaInput{Workloads: []Workload{operator}, Operands: []Operand{kv(0)}},
			map[string]string{"requests.cpu": "10m", "pods": "1", "count/kvstores.kv.opctl.dev": "0"}, ""},
		{"overrides win", QuotaInput{Workloads: []Workload{operator}, Operands: []Operand{kv(3)}, Overrides: rl("requests.cpu", "4", "services", "5")},
			map[string]string{"requests.cpu": "4", "services": "5", "pods": "4"},
			"requests.cpu = 4 (spec.quota.hard)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := ComputeQuota(tt.in)
			for name, want := range tt.want {
				got, ok := q.Hard[corev1.ResourceName(name)]
				if !ok || got.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("%s = %v, want %s", name, got.String(), want)
				}
			}
			if tt.why != "" && !strings.Contains(strings.Join(q.Derivation, "\n"), tt.why) {
				t.Errorf("derivation lacks %q:\n%s", tt.why, strings.Join(q.Derivation, "\n"))
			}
		})
	}
	q := ComputeQuota(QuotaInput{Operands: []Operand{kv(1)}})
	if d := q.Default[corev1.ResourceCPU]; d.String() != "500m" {
		t.Errorf("LimitRange default cpu %s, want 500m", d.String())
	}
	if d := q.DefaultRequest[corev1.ResourceMemory]; d.String() != "128Mi" {
		t.Errorf("LimitRange default request memory %s, want 128Mi", d.String())
	}
}
