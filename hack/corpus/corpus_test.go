package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestReadList(t *testing.T) {
	commit := strings.Repeat("a", 40)
	tests := []struct {
		name, text, err string
		want            []project
	}{
		{"lines, comments and an overlay", "# header\no/r " + commit + " sub go-v4,webhooks overlay=config/prod # why\n\no/s " + commit + " . go-v3\n", "",
			[]project{{Repo: "o/r", Commit: commit, Subdir: "sub", Classes: []string{"go-v4", "webhooks"}, Overlay: "config/prod"},
				{Repo: "o/s", Commit: commit, Subdir: ".", Classes: []string{"go-v3"}, Overlay: "config/default"}}},
		{"short commit", "o/r abc . x\n", "is not 40 hex digits", nil},
		{"no owner", "r " + commit + " . x\n", "is not owner/name", nil},
		{"too few fields", "o/r " + commit + "\n", "got 2 fields", nil},
		{"bad fifth field", "o/r " + commit + " . x dir=y\n", "want overlay=dir", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "projects.txt")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readList(path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one holding %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d projects, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i].ID() != tt.want[i].ID() || got[i].Overlay != tt.want[i].Overlay || strings.Join(got[i].Classes, ",") != strings.Join(tt.want[i].Classes, ",") {
					t.Errorf("project %d: %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func obj(kind, name string, labels map[string]any) *unstructured.Unstructured {
	m := map[string]any{"name": name}
	if labels != nil {
		m["labels"] = labels
	}
	return &unstructured.Unstructured{Object: map[string]any{"kind": kind, "metadata": m}}
}

func TestCheckNames(t *testing.T) {
	long := strings.Repeat("a", 64)
	tests := []struct {
		o   *unstructured.Unstructured
		bad bool
	}{
		{obj("Service", "web", nil), false},
		{obj("Service", long, nil), true},
		{obj("Service", "1web", nil), true},
		{obj("ConfigMap", long, nil), false},
		{obj("ClusterRole", "system:auth-delegator", nil), false},
		{obj("StatefulSet", strings.Repeat("s", 53), nil), true},
		{obj("ConfigMap", "c", map[string]any{"app": long}), true},
	}
	for _, tt := range tests {
		if got := len(checkNames([]*unstructured.Unstructured{tt.o})) > 0; got != tt.bad {
			t.Errorf("%s %.20s labels %v: bad %v, want %v", tt.o.GetKind(), tt.o.GetName(), tt.o.GetLabels(), got, tt.bad)
		}
	}
}

func TestDropped(t *testing.T) {
	ref := []*unstructured.Unstructured{obj("Service", "op-metrics", nil), obj("ClusterRole", "op-reader", nil), obj("Ingress", "op-web", nil), obj("Namespace", "op-system", nil)}
	rendered := []*unstructured.Unstructured{obj("Service", "r-op-metrics", nil), obj("Role", "r-reader", nil)}
	chart, _ := dropped(ref, rendered, nil, "op-", nil, []string{"Ingress op-web: left out"})
	if strings.Join(chart, ",") != "" {
		t.Errorf("dropped from the chart: %v, want none (renamed, Role for ClusterRole, warned, Namespace)", chart)
	}
	chart, _ = dropped(ref, rendered[:1], nil, "op-", nil, nil)
	if strings.Join(chart, ",") != "ClusterRole op-reader,Ingress op-web" {
		t.Errorf("dropped from the chart: %v", chart)
	}
}
