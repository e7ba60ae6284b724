package helmrelease

import (
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
)

// TestInstallBackoff: the same chart (by content) and values wait after a failure,
// twice as long after each, up to maxInstallBackoff; another chart or
// other values, or a success, do not wait.
func TestInstallBackoff(t *testing.T) {
	var f failedInstalls
	testBackoff(t, &f.failedRuns, f.wait, installBackoff, maxInstallBackoff)
}

// testBackoff runs f through failures and a success, wait being its wait
// from first up to most.
func testBackoff(t *testing.T, f *failedRuns, wait func(string, *chart.Chart, map[string]any, time.Time) time.Duration, first, most time.Duration) {
	t.Helper()
	a := &chart.Chart{Metadata: &chart.Metadata{Name: "kv", Version: "0.1.0"}, Templates: []*chart.File{{Name: "templates/a.yaml", Data: []byte("a")}}}
	b := &chart.Chart{Metadata: &chart.Metadata{Name: "kv", Version: "0.1.0"}, Templates: []*chart.File{{Name: "templates/a.yaml", Data: []byte("b")}}}
	same := &chart.Chart{Metadata: a.Metadata, Templates: []*chart.File{{Name: "templates/a.yaml", Data: []byte("a")}}}
	values := map[string]any{"replicas": 1}
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	const ref = "t/ns/kv"
	if w := wait(ref, a, values, t0); w != 0 {
		t.Fatalf("before any failure: wait %v", w)
	}
	f.failed(ref, a, values, t0)
	if w := wait(ref, a, values, t0.Add(time.Second)); w != first-time.Second {
		t.Errorf("after one failure: wait %v, want %v", w, first-time.Second)
	}
	if w := wait(ref, b, values, t0); w != 0 {
		t.Errorf("another chart of the same version waits %v", w)
	}
	if w := wait(ref, same, values, t0.Add(time.Second)); w != first-time.Second {
		t.Errorf("the same chart made anew (a bundle's, every plan): wait %v, want %v", w, first-time.Second)
	}
	if w := wait(ref, a, map[string]any{"replicas": 2}, t0); w != 0 {
		t.Errorf("other values wait %v", w)
	}
	f.failed(ref, a, values, t0.Add(first))
	if w := wait(ref, a, values, t0.Add(first)); w != 2*first {
		t.Errorf("after two failures: wait %v, want %v", w, 2*first)
	}
	for i := range 20 {
		f.failed(ref, a, values, t0.Add(time.Duration(i)*time.Hour))
	}
	if w := wait(ref, a, values, t0.Add(19*time.Hour)); w != most {
		t.Errorf("after many failures: wait %v, want the cap %v", w, most)
	}
	f.forget(ref)
	if w := wait(ref, a, values, t0.Add(19*time.Hour)); w != 0 {
		t.Errorf("after a success: wait %v", w)
	}
}
