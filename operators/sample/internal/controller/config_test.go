package controller

import (
	"strings"
	"testing"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

func TestRenderConfigIsDeterministic(t *testing.T) {
	k := &kvv1.KVStore{}
	k.Spec.Config = map[string]string{"maxmemory-policy": "allkeys-lru", "maxmemory": "100mb", "appendfsync": "everysec"}
	first := renderConfig(k)
	for range 20 {
		if renderConfig(k) != first {
			t.Fatal("renderConfig output depends on map order")
		}
	}
	if !strings.Contains(first, "appendfsync everysec\nmaxmemory 100mb\nmaxmemory-policy allkeys-lru\n") {
		t.Errorf("directives not sorted:\n%s", first)
	}
}

func TestCheckConfig(t *testing.T) {
	tests := []struct {
		cfg     map[string]string
		wantErr string
	}{
		{map[string]string{"maxmemory": "100mb"}, ""},
		{map[string]string{"requirepass": "x"}, "spec.config.requirepass is managed by the operator"},
		{map[string]string{"Port": "1"}, "spec.config.Port is managed"},
		{map[string]string{"bad key": "x"}, "one word"},
		{map[string]string{"maxmemory": "1\nrequirepass x"}, "values one line"},
	}
	for _, tt := range tests {
		err := checkConfig(tt.cfg)
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("checkConfig(%v) = %v, want error containing %q", tt.cfg, err, tt.wantErr)
		}
	}
}
