package kstatustest

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func object(gen, observed int64, conds ...map[string]any) *unstructured.Unstructured {
	cs := make([]any, len(conds))
	for i, c := range conds {
		c["lastTransitionTime"] = "2026-01-01T00:00:00Z"
		c["message"] = ""
		cs[i] = c
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.opctl.dev/v1", "kind": "Thing",
		"metadata": map[string]any{"name": "t", "generation": gen},
		"status":   map[string]any{"observedGeneration": observed, "conditions": cs},
	}}
}

func cond(typ, status string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": "R"}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		want    string
		wantErr string
	}{
		{"ready", object(2, 2, cond("Ready", "True"), cond("Progressing", "False")), "Current", ""},
		{"progressing mirrored", object(2, 2, cond("Ready", "False"), cond("Progressing", "True"), cond("Reconciling", "True")), "InProgress", ""},
		{"stalled", object(2, 2, cond("Ready", "False"), cond("Degraded", "True"), cond("Stalled", "True")), "Failed", ""},
		{"old generation", object(3, 2, cond("Ready", "True")), "InProgress", ""},
		{"not ready, nothing else", object(2, 2, cond("Ready", "False")), "InProgress", ""},
		{"ready but progressing without Reconciling", object(2, 2, cond("Ready", "True"), cond("Progressing", "True")), "Current", "conditions say InProgress but kstatus reads Current"},
		{"stalled without Degraded", object(2, 2, cond("Ready", "True"), cond("Stalled", "True")), "Failed", "conditions say Current but kstatus reads Failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Check(tt.obj)
			if string(got) != tt.want {
				t.Errorf("kstatus = %s, want %s", got, tt.want)
			}
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}
