package helmrelease

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	tenancyv1 "opctl.dev/opctl/pkg/tenancy/api/v1alpha1"
)

func TestKeepIgnored(t *testing.T) {
	obj := func(kind, name string, fields map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": name}}}
		for k, v := range fields {
			u.Object[k] = v
		}
		return u
	}
	rule := func(kind, name string, paths ...string) tenancyv1.DriftIgnoreRule {
		r := tenancyv1.DriftIgnoreRule{Paths: paths}
		if kind != "" || name != "" {
			r.Target = &tenancyv1.DriftTarget{Kind: kind, Name: name}
		}
		return r
	}
	tests := []struct {
		name                string
		desired, live, want *unstructured.Unstructured
		rules               []tenancyv1.DriftIgnoreRule
	}{
		{"a field takes the live value", obj("Deployment", "m", map[string]any{"spec": map[string]any{"replicas": int64(1), "paused": false}}),
			obj("Deployment", "m", map[string]any{"spec": map[string]any{"replicas": int64(5)}}),
			obj("Deployment", "m", map[string]any{"spec": map[string]any{"replicas": int64(5), "paused": false}}),
			[]tenancyv1.DriftIgnoreRule{rule("Deployment", "m", "/spec/replicas")}},
		{"a field live lacks is dropped", obj("ConfigMap", "c", map[string]any{"data": map[string]any{"ca.crt": "x", "keep": "y"}}),
			obj("ConfigMap", "c", map[string]any{"data": map[string]any{"keep": "z"}}),
			obj("ConfigMap", "c", map[string]any{"data": map[string]any{"keep": "y"}}),
			[]tenancyv1.DriftIgnoreRule{rule("", "", "/data/ca.crt")}},
		{"an escaped key and a list index", obj("Service", "s", map[string]any{"metadata": map[string]any{"name": "s", "annotations": map[string]any{"a/b": "1"}}, "spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}}),
			obj("Service", "s", map[string]any{"metadata": map[string]any{"name": "s", "annotations": map[string]any{"a/b": "2"}}, "spec": map[string]any{"ports": []any{map[string]any{"port": int64(81)}}}}),
			obj("Service", "s", map[string]any{"metadata": map[string]any{"name": "s", "annotations": map[string]any{"a/b": "2"}}, "spec": map[string]any{"ports": []any{map[string]any{"port": int64(81)}}}}),
			[]tenancyv1.DriftIgnoreRule{rule("Service", "", "/metadata/annotations/a~1b", "/spec/ports/0/port")}},
		{"another target's rule", obj("Deployment", "m", map[string]any{"spec": map[string]any{"replicas": int64(1)}}),
			obj("Deployment", "m", map[string]any{"spec": map[string]any{"replicas": int64(5)}}),
			obj("Deployment", "m", map[string]any{"spec": map[string]any{"replicas": int64(1)}}),
			[]tenancyv1.DriftIgnoreRule{rule("Deployment", "other", "/spec/replicas"), rule("StatefulSet", "", "/spec/replicas")}},
		{"a pointer past a scalar", obj("ConfigMap", "c", map[string]any{"data": map[string]any{"k": "v"}}),
			obj("ConfigMap", "c", map[string]any{"data": map[string]any{"k": "w"}}),
			obj("ConfigMap", "c", map[string]any{"data": map[string]any{"k": "v"}}),
			[]tenancyv1.DriftIgnoreRule{rule("", "", "/data/k/deeper", "not-a-pointer")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keepIgnored(tt.desired, tt.live, tt.rules)
			if !reflect.DeepEqual(tt.desired.Object, tt.want.Object) {
				t.Errorf("got %v, want %v", tt.desired.Object, tt.want.Object)
			}
		})
	}
}

// TestDriftObjects: every namespaced object of the release in the
// tenant's namespaces is kept but Jobs and Pods (they run to completion:
// one gone is not run again), the four kinds informers follow marked
// watched, and an HPA's target is noted with its minReplicas.
func TestDriftObjects(t *testing.T) {
	const manifest = `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: manager
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: manager
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: manager}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cluster-wide
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: elsewhere
  namespace: other
`
	tenant := &tenancyv1.Tenant{Spec: tenancyv1.TenantSpec{Namespaces: []string{"ns"}}}
	namespaced := func(gvk schema.GroupVersionKind) bool { return gvk.Kind != "ClusterRole" }
	p := driftObjects(manifest, "ns", tenant, map[string]string{tenancyv1.LabelTenant: "t"}, namespaced)
	var got []string
	for _, o := range p.Objs {
		got = append(got, o.key()+map[bool]string{true: " watched", false: ""}[o.watched])
	}
	want := []string{"ns/Deployment/manager watched", "ns/StatefulSet/db", "ns/HorizontalPodAutoscaler/manager"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("drift objects %q, want %q", got, want)
	}
	if want := map[string]int64{"Deployment/manager": 1}; !reflect.DeepEqual(p.scaled, want) {
		t.Errorf("HPA-scaled workloads %v, want %v", p.scaled, want)
	}
	// An HPA keeps the replicas it could have set, not 0 (it does not
	// scale up from 0).
	d := &drifter{scaled: map[string]int64{"Deployment/manager": 2}}
	desired := &unstructured.Unstructured{Object: map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "manager"}}}
	for replicas, ignored := range map[int64]bool{0: false, 1: false, 2: true, 5: true} {
		live := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": replicas}}}
		if got := len(d.rulesFor(desired, live)) == 1; got != ignored {
			t.Errorf("live replicas %d: replicas ignored %v, want %v", replicas, got, ignored)
		}
	}
}
