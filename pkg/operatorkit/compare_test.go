package operatorkit

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func mustNormalize(t *testing.T, v any) any {
	t.Helper()
	n, err := normalize(v)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSubset(t *testing.T) {
	desiredPod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "a"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "main", Image: "img:1",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0.5")}},
		}}},
	}
	// The server adds defaults, other labels, an extra sidecar and status.
	livePod := desiredPod.DeepCopy()
	livePod.UID = "u1"
	livePod.Labels["other"] = "x"
	livePod.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
	livePod.Spec.Containers = append([]corev1.Container{{Name: "sidecar", Image: "s:1"}}, livePod.Spec.Containers...)
	livePod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	livePod.Status.Phase = corev1.PodRunning

	drifted := livePod.DeepCopy()
	drifted.Spec.Containers[1].Image = "img:2"
	relabeled := livePod.DeepCopy()
	relabeled.Labels["app"] = "b"
	argsDesired := &corev1.Container{Name: "c", Args: []string{"--a", "--b"}}
	argsLive := &corev1.Container{Name: "c", Args: []string{"--a"}}

	tests := []struct {
		name          string
		desired, live any
		want          bool
	}{
		{"defaults and foreign fields ignored", desiredPod, livePod, true},
		{"quantity forms compare canonically", desiredPod, func() any {
			p := livePod.DeepCopy()
			p.Spec.Containers[1].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("500m")
			return p
		}(), true},
		{"a manifest's number is the server's canonical quantity", map[string]any{"limits": map[string]any{"cpu": 1, "memory": "0.5Gi"}, "requests": map[string]any{"cpu": 0.1}},
			map[string]any{"limits": map[string]any{"cpu": "1", "memory": "512Mi"}, "requests": map[string]any{"cpu": "100m"}}, true},
		{"another quantity is drift", map[string]any{"cpu": 1}, map[string]any{"cpu": "2"}, false},
		{"an unbounded exponent is not parsed", map[string]any{"cpu": "1e-99999999"}, map[string]any{"cpu": "0"}, false},
		{"changed image is drift", desiredPod, drifted, false},
		{"changed label is drift", desiredPod, relabeled, false},
		{"atomic list must be equal", argsDesired, argsLive, false},
		{"missing field is drift", map[string]any{"data": map[string]any{"k": "v"}}, map[string]any{}, false},
		{"type mismatch", map[string]any{"a": []any{"x"}}, map[string]any{"a": "x"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := subset(mustNormalize(t, tt.desired), mustNormalize(t, tt.live)); got != tt.want {
				t.Errorf("subset = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDesiredHashIsCanonical(t *testing.T) {
	a := map[string]any{"b": 1, "a": map[string]any{"y": "1", "x": "2"}}
	b := map[string]any{"a": map[string]any{"x": "2", "y": "1"}, "b": 1}
	ha, err := desiredHash(a)
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := desiredHash(b)
	if ha != hb {
		t.Errorf("hash depends on key order: %s vs %s", ha, hb)
	}
	c := map[string]any{"a": map[string]any{"x": "2"}, "b": 1}
	if hc, _ := desiredHash(c); hc == ha {
		t.Error("removing a field did not change the hash")
	}
}
