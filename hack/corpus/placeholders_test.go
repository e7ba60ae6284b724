package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"opctl.dev/opctl/internal/testcluster"
	"opctl.dev/opctl/pkg/packaging"
)

// A project whose manifests carry ${VAR} and ko:// placeholders is
// packaged: the runner sets the values the chart requires, and the chart
// then lints and renders none outside the CRDs; without them it fails
// naming the value.
func TestPlaceholderValues(t *testing.T) {
	helm := filepath.Join(testcluster.RequireBinDir(t), "helm")
	out := t.TempDir()
	pr, err := packaging.Package(context.Background(), "../../pkg/packaging/testdata/placeholders", packaging.PackageOptions{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(pr)
	if err != nil {
		t.Fatal(err)
	}
	var res packageResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	set := res.requiredValues()
	want := []string{"placeholders.CLUSTER_NAME=corpus00", "placeholders.REGISTRY=corpus00", "images.helper=registry.invalid/corpus/helper:v0"}
	if !slices.Equal(set, want) {
		t.Errorf("required values %q, want %q", set, want)
	}
	charts := res.charts(out)
	if err := lint(helm, charts, set...); err != nil {
		t.Errorf("lint with the required values: %v", err)
	}
	rendered, err := template(helm, release, "corpus", charts, set...)
	if err != nil {
		t.Fatal(err)
	}
	if left := buildTimeRefs(rendered); len(left) > 0 {
		t.Errorf("the chart renders placeholders: %v", left)
	}
	if !slices.ContainsFunc(rendered, func(o *unstructured.Unstructured) bool {
		b, _ := json.Marshal(o.Object)
		return o.GetKind() == "CustomResourceDefinition" && strings.Contains(string(b), "${SIZE}")
	}) {
		t.Error("the CRD lost its ${SIZE} text, or was not rendered")
	}
	if _, err := template(helm, release, "corpus", charts, set[1:]...); err == nil || !strings.Contains(err.Error(), "placeholders.CLUSTER_NAME is required") {
		t.Errorf("template without placeholders.CLUSTER_NAME: %v, want an error naming it", err)
	}
}

func TestBuildTimeRefs(t *testing.T) {
	cm := obj("ConfigMap", "settings", nil)
	cm.Object["data"] = map[string]any{"image": "${REGISTRY}/x:${TAG:=v1}", "helper": "ko://example.com/x/cmd/helper", "script.sh": "#!/bin/sh\ncd ${HOME}\n"}
	cm.Object["command"] = []any{"sh", "-c", "exec /manager --home=${HOME}"}
	crd := obj("CustomResourceDefinition", "widgets.example.com", nil)
	crd.Object["spec"] = map[string]any{"description": "as in ${SIZE}"}
	got := buildTimeRefs([]*unstructured.Unstructured{crd, cm})
	slices.Sort(got)
	if want := []string{"${REGISTRY}", "${TAG:=v1}", "ko://example.com/x/cmd/helper"}; !slices.Equal(got, want) {
		t.Errorf("buildTimeRefs = %q, want %q (the CRD's text, the scripts left)", got, want)
	}
}
