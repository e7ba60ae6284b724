package quota

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func deploymentWith(container map[string]any, pod map[string]any) *unstructured.Unstructured {
	spec := map[string]any{"containers": []any{container}}
	for k, v := range pod {
		spec[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "op"},
		"spec": map[string]any{"template": map[string]any{"spec": spec}},
	}}
}

// Quantity text that would stall apimachinery's parser for minutes is
// refused before decoding, wherever a workload holds quantities; plain
// figures are read.
func TestAnalyzeRefusesStallingQuantities(t *testing.T) {
	huge := "1e-99999999"
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		bad  bool
	}{
		{"plain", deploymentWith(map[string]any{"name": "m", "resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128e3"}}}, nil), false},
		{"requests", deploymentWith(map[string]any{"name": "m", "resources": map[string]any{"requests": map[string]any{"cpu": huge}}}, nil), true},
		{"limits", deploymentWith(map[string]any{"name": "m", "resources": map[string]any{"limits": map[string]any{"memory": "1E-999"}}}, nil), true},
		{"overhead", deploymentWith(map[string]any{"name": "m"}, map[string]any{"overhead": map[string]any{"cpu": huge}}), true},
		{"emptyDir sizeLimit", deploymentWith(map[string]any{"name": "m"}, map[string]any{"volumes": []any{map[string]any{"name": "v", "emptyDir": map[string]any{"sizeLimit": huge}}}}), true},
		{"env values are not quantities", deploymentWith(map[string]any{"name": "m", "env": []any{map[string]any{"name": "X", "value": huge}}}, nil), false},
	}
	for _, tc := range cases {
		// "not a plain quantity" is the guard's refusal, before
		// apimachinery's parser sees the text.
		_, err := Analyze([]*unstructured.Unstructured{tc.obj})
		switch {
		case tc.bad && (err == nil || !strings.Contains(err.Error(), "Deployment op") || !strings.Contains(err.Error(), "not a plain quantity")):
			t.Errorf("%s: %v, want a refusal naming the Deployment", tc.name, err)
		case !tc.bad && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// TestUnlimitedRequests: a workload notes, per resource, the largest
// request of a container (init containers too) that sets no limit for it.
func TestUnlimitedRequests(t *testing.T) {
	d := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "m"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"initContainers": []any{map[string]any{"name": "i", "resources": map[string]any{"requests": map[string]any{"memory": "3Gi"}}}},
			"containers": []any{
				map[string]any{"name": "a", "resources": map[string]any{"requests": map[string]any{"cpu": "1", "memory": "1Gi"}, "limits": map[string]any{"memory": "2Gi"}}},
				map[string]any{"name": "b", "resources": map[string]any{"requests": map[string]any{"cpu": "2"}, "limits": map[string]any{"cpu": "2"}}},
			}}}}}}
	w, err := workload(d)
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("3Gi")}
	if len(w.UnlimitedRequests) != len(want) {
		t.Fatalf("UnlimitedRequests %v, want %v", w.UnlimitedRequests, want)
	}
	for k, v := range want {
		if got := w.UnlimitedRequests[k]; got.Cmp(v) != 0 {
			t.Errorf("UnlimitedRequests %s = %s, want %s", k, got.String(), v.String())
		}
	}
}
