package quota

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
		in   Input
		want map[string]string
		why  string // a substring of the derivation
	}{
		{"operator only", Input{Workloads: []Workload{operator}},
			map[string]string{"requests.cpu": "10m", "requests.memory": "64Mi", "limits.cpu": "500m", "limits.memory": "256Mi", "pods": "1"},
			"requests.cpu = deployment/kv-manager 1×10m = 10m, +0% headroom = 10m"},
		{"three instances", Input{Workloads: []Workload{operator}, Operands: []Operand{kv(3)}},
			map[string]string{"requests.cpu": "310m", "requests.memory": "448Mi", "limits.cpu": "2", "limits.memory": "1Gi", "pods": "4", "count/kvstores.kv.opctl.dev": "3"},
			"count/kvstores.kv.opctl.dev = instances 3"},
		{"headroom rounds up", Input{Workloads: []Workload{operator}, Operands: []Operand{kv(3)}, HeadroomPercent: 20},
			map[string]string{"requests.cpu": "372m", "requests.memory": "538Mi", "limits.cpu": "2400m", "limits.memory": "1229Mi", "pods": "4"},
			"+20% headroom = 372m"},
		{"replicas and storage", Input{Operands: []Operand{stored}},
			map[string]string{"requests.cpu": "600m", "pods": "6", "persistentvolumeclaims": "6", "requests.storage": "6Gi", "count/kvstores.kv.opctl.dev": "2"},
			"requests.storage = kvstores.kv.opctl.dev 6×1Gi = 6Gi"},
		{"zero instances", Input{Workloads: []Workload{operator}, Operands: []Operand{kv(0)}},
			map[string]string{"requests.cpu": "10m", "pods": "1", "count/kvstores.kv.opctl.dev": "0"}, ""},
		{"overrides win", Input{Workloads: []Workload{operator}, Operands: []Operand{kv(3)}, Overrides: rl("requests.cpu", "4", "services", "5")},
			map[string]string{"requests.cpu": "4", "services": "5", "pods": "4"},
			"requests.cpu = 4 (spec.quota.hard)"},
		{"defaults alone (no operators)", Input{Defaults: rl("requests.cpu", "2", "pods", "30", "count/secrets", "100")},
			map[string]string{"requests.cpu": "2", "pods": "30", "count/secrets": "100"},
			"count/secrets = default 100 = 100"},
		{"defaults add to the computed figures", Input{Workloads: []Workload{operator}, Operands: []Operand{kv(3)}, Defaults: rl("requests.cpu", "2", "pods", "30")},
			map[string]string{"requests.cpu": "2310m", "pods": "34", "requests.memory": "448Mi"},
			"requests.cpu = deployment/kv-manager 1×10m + kvstores.kv.opctl.dev 3×100m = 310m, +0% headroom = 310m, + default 2 = 2310m"},
		{"the platform's objects add to a default count", Input{Defaults: rl("count/rolebindings.rbac.authorization.k8s.io", "50", "count/configmaps", "100"),
			Objects: map[corev1.ResourceName]int64{"count/rolebindings.rbac.authorization.k8s.io": 4, "count/secrets": 3}},
			map[string]string{"count/rolebindings.rbac.authorization.k8s.io": "54", "count/configmaps": "100"},
			"count/rolebindings.rbac.authorization.k8s.io = default 50 + 4 the platform creates = 54"},
		{"a default count of Pod objects adds to the running pods", Input{Workloads: []Workload{operator}, Operands: []Operand{kv(3)}, Defaults: rl("pods", "30", "count/pods", "100")},
			map[string]string{"pods": "34", "count/pods": "104"}, "count/pods = pods 4, + default 100 = 104"},
		{"the operators' pods take the container default of ephemeral storage", Input{Operands: []Operand{kv(30)},
			Defaults: rl("requests.ephemeral-storage", "20Gi", "limits.ephemeral-storage", "40Gi"), ContainerRequest: rl("ephemeral-storage", "256Mi"), ContainerLimit: rl("ephemeral-storage", "1Gi")},
			map[string]string{"requests.ephemeral-storage": "28160Mi", "limits.ephemeral-storage": "70Gi"},
			"requests.ephemeral-storage = pods 30 × container default 256Mi = 7680Mi, + default 20Gi"},
		{"overrides win over defaults", Input{Defaults: rl("requests.cpu", "2"), Overrides: rl("requests.cpu", "1")},
			map[string]string{"requests.cpu": "1"}, "requests.cpu = 1 (spec.quota.hard)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := Compute(tt.in)
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
	q := Compute(Input{Operands: []Operand{kv(1)}})
	if d := q.Default[corev1.ResourceCPU]; d.String() != "500m" {
		t.Errorf("LimitRange default cpu %s, want 500m", d.String())
	}
	if d := q.DefaultRequest[corev1.ResourceMemory]; d.String() != "128Mi" {
		t.Errorf("LimitRange default request memory %s, want 128Mi", d.String())
	}
	// The profile's container defaults: the larger figure wins.
	q = Compute(Input{Operands: []Operand{kv(1)}, ContainerLimit: rl("cpu", "200m", "memory", "1Gi"), ContainerRequest: rl("ephemeral-storage", "1Gi")})
	if d, m := q.Default[corev1.ResourceCPU], q.Default[corev1.ResourceMemory]; d.String() != "500m" || m.String() != "1Gi" {
		t.Errorf("LimitRange defaults cpu %s memory %s, want the operand's 500m and the profile's 1Gi", d.String(), m.String())
	}
	if d := q.DefaultRequest[corev1.ResourceEphemeralStorage]; d.String() != "1Gi" {
		t.Errorf("LimitRange default request ephemeral-storage %s, want the profile's 1Gi", d.String())
	}
	// Default limits admit what they apply to (TestAdmitDefaults).
	// Counted objects set no figure the defaults do not.
	q = Compute(Input{Objects: map[corev1.ResourceName]int64{"count/secrets": 3}})
	if len(q.Hard) != 0 {
		t.Errorf("quota %v from objects alone, want none", q.Hard)
	}
}

// TestAdmitDefaults: the LimitRange's default limits are never below the
// default requests (the API server refuses such a LimitRange, and the
// controller's later writes for the tenant with it), nor below the
// request of an operator's container that sets no limit (its pods would
// be refused).
func TestAdmitDefaults(t *testing.T) {
	requestsOnly := Workload{Name: "Deployment/manager", Replicas: 1, Requests: rl("cpu", "1", "memory", "1Gi"), Limits: rl("memory", "2Gi"),
		UnlimitedRequests: rl("cpu", "1")}
	tests := []struct {
		name       string
		in         Input
		cpu, mem   string // want Default
		defaultCPU string // want DefaultRequest cpu
	}{
		{"defaults as given", Input{ContainerRequest: rl("cpu", "100m", "memory", "128Mi"), ContainerLimit: rl("cpu", "500m", "memory", "512Mi")}, "500m", "512Mi", "100m"},
		{"an operand's request over the profile's limit", Input{ContainerRequest: rl("cpu", "100m"), ContainerLimit: rl("cpu", "500m", "memory", "512Mi"),
			Operands: []Operand{{CRD: "kvs.example.com", Instances: 1, Replicas: 1, Requests: rl("cpu", "1")}}}, "1", "512Mi", "1"},
		{"a profile's request over its limit", Input{ContainerRequest: rl("memory", "1Gi"), ContainerLimit: rl("cpu", "500m", "memory", "512Mi")}, "500m", "1Gi", ""},
		{"an operator container with a request and no limit", Input{Workloads: []Workload{requestsOnly}, ContainerRequest: rl("cpu", "100m"), ContainerLimit: rl("cpu", "500m", "memory", "512Mi")}, "1", "512Mi", "100m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := Compute(tt.in)
			if c, m := q.Default[corev1.ResourceCPU], q.Default[corev1.ResourceMemory]; c.Cmp(resource.MustParse(tt.cpu)) != 0 || m.Cmp(resource.MustParse(tt.mem)) != 0 {
				t.Errorf("default limits cpu %s memory %s, want %s %s", c.String(), m.String(), tt.cpu, tt.mem)
			}
			if tt.defaultCPU != "" {
				if r := q.DefaultRequest[corev1.ResourceCPU]; r.Cmp(resource.MustParse(tt.defaultCPU)) != 0 {
					t.Errorf("default request cpu %s, want %s", r.String(), tt.defaultCPU)
				}
			}
			for k, r := range q.DefaultRequest {
				if l, ok := q.Default[k]; ok && r.Cmp(l) > 0 {
					t.Errorf("default request %s %s over its default limit %s", k, r.String(), l.String())
				}
			}
		})
	}
}
