package packaging

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// An overlay object decoded from krusty's nodes is the object the JSON
// round trip through its YAML makes, or the same error; a folded scalar
// with a more-indented line holds what the YAML specification says.
func TestOverlayObjectIsTheJSONRoundTrip(t *testing.T) {
	tests := []struct{ name, doc string }{
		{"plain", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {k: v}\n"},
		{"numbers", "apiVersion: v1\nkind: X\nspec: {i: 3, neg: -4, f: 1.5, whole: 2.0, exp: 1e3, big: 1e25, tiny: 1e-7, negzero: -0.0, max: 9223372036854775807, over: 18446744073709551615, octal: 0o17, hex: 0x1F}\n"},
		{"quoted and special strings", "apiVersion: v1\nkind: X\nspec: {q: \"3\", yes: yes, on: on, tilde: ~, empty: '', date: 2001-12-14, ts: 2001-12-14T21:59:43.10-05:00}\n"},
		{"nulls and bools", "apiVersion: v1\nkind: X\nspec: {n: null, t: true, f: false, list: [null, 1, a, {b: [2.5]}]}\n"},
		{"binary", "apiVersion: v1\nkind: X\nspec: {b: !!binary aGVsbG8=}\n"},
		{"a non-string key", "apiVersion: v1\nkind: X\nspec: {1: a}\n"},
		{"a nested non-string key", "apiVersion: v1\nkind: X\nspec: {m: {true: a}}\n"},
		{"infinity", "apiVersion: v1\nkind: X\nspec: {inf: .inf, nan: .nan}\n"},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n"},
		{"a list kind", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"},
	}
	// The YAML specification's example 8.10: a line break before a
	// more-indented line is kept, not doubled (the round trip doubled it).
	rn, err := kyaml.Parse("apiVersion: v1\nkind: X\nspec:\n  e: >-\n    a &&\n      (b)\n    c\n")
	if err != nil {
		t.Fatal(err)
	}
	u, err := overlayObject(rn)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(u.Object, "spec", "e"); got != "a &&\n  (b)\nc" {
		t.Errorf("folded scalar %q, want %q", got, "a &&\n  (b)\nc")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rn, err := kyaml.Parse(tt.doc)
			if err != nil {
				t.Fatal(err)
			}
			var want *unstructured.Unstructured
			j, wantErr := rn.MarshalJSON()
			if wantErr == nil {
				want = &unstructured.Unstructured{}
				wantErr = want.UnmarshalJSON(j)
			}
			got, err := overlayObject(rn)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error %v, the round trip's %v", err, wantErr)
			}
			if err == nil && !reflect.DeepEqual(got.Object, want.Object) {
				t.Errorf("object\n%#v\nthe round trip's\n%#v", got.Object, want.Object)
			}
		})
	}
}
