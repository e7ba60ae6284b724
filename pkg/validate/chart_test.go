package validate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const sampleChart = "../../charts/sample-operator"

func TestSampleChart(t *testing.T) {
	r, err := ValidateChart(sampleChart, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, f.Check)
		if f.Severity == SeverityError {
			t.Errorf("error on the sample chart: %+v", f)
		}
	}
	// The one honest warning: the storageclasses rule needs a ClusterRole.
	if !slices.Equal(ids, []string{"OPC-C008"}) {
		t.Errorf("findings %v, want exactly OPC-C008", r.Findings)
	}
}

func TestBadChart(t *testing.T) {
	r, err := ValidateChart("testdata/badchart", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"OPC-C001": "container web lacks a liveness or readiness probe",
		"OPC-C002": "container sidecar has no requests.cpu, limits.cpu, requests.memory, limits.memory",
		"OPC-C003": "readOnlyRootFilesystem is not true",
		"OPC-C004": "volume host is a hostPath",
		"OPC-C005": "image example.com/web:latest uses the latest tag",
		"OPC-C006": "3 replicas and no PodDisruptionBudget",
		"OPC-C007": "uses a wildcard",
		"OPC-C009": "only in crds/",
	}
	for id, msg := range want {
		i := slices.IndexFunc(r.Findings, func(f Finding) bool { return f.Check == id && strings.Contains(f.Message, msg) })
		if i < 0 {
			t.Errorf("no %s finding containing %q", id, msg)
			continue
		}
		if f := r.Findings[i]; id != "OPC-C009" && (f.File == "" || f.Line < 2) {
			t.Errorf("%s has no useful location: %+v", id, f)
		}
	}
	if !slices.ContainsFunc(r.Findings, func(f Finding) bool {
		return f.Check == "OPC-C005" && strings.Contains(f.Message, "sidecar has no tag")
	}) {
		t.Errorf("untagged image not reported")
	}
}

// A chart whose Chart.yaml names the values it requires renders with them
// set; without the annotation it fails to render, as helm template would.
func TestRequiredValues(t *testing.T) {
	for _, annotated := range []bool{true, false} {
		dir := t.TempDir()
		meta := "apiVersion: v2\nname: req-crds\nversion: 1.0.0\n"
		if annotated {
			meta += "annotations:\n  opctl.dev/required-values: conversion.release\n"
		}
		for name, text := range map[string]string{
			"Chart.yaml":               meta,
			"values.yaml":              "conversion:\n  release: \"\"\n",
			"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  release: {{ required \"conversion.release: set it\" .Values.conversion.release | quote }}\n",
		} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r, err := ValidateChart(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		failed := slices.ContainsFunc(r.Findings, func(f Finding) bool {
			return f.Severity == SeverityError && strings.Contains(f.Message, "conversion.release: set it")
		})
		if failed == annotated {
			t.Errorf("annotated %v: findings %+v", annotated, r.Findings)
		}
	}
}
