package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
	"opctl.dev/opctl/operators/sample/internal/instance"
	"opctl.dev/opctl/operators/sample/internal/instance/instancetest"
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

func TestAutoTuning(t *testing.T) {
	limit := func(mem string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}}
	}
	tests := []struct {
		name string
		spec kvv1.KVStoreSpec
		want []string // directives, in order
	}{
		{"defaults: 75% of the default 256Mi limit, no eviction", kvv1.KVStoreSpec{},
			[]string{"maxmemory 201326592", "maxmemory-policy noeviction"}},
		{"cache mode evicts", kvv1.KVStoreSpec{Mode: kvv1.ModeCache, Resources: limit("1Gi")},
			[]string{"maxmemory 805306368", "maxmemory-policy allkeys-lru"}},
		{"a percentage", kvv1.KVStoreSpec{Resources: limit("1Gi"), Tuning: kvv1.TuningSpec{MaxMemoryPercent: ptr.To[int32](50)}},
			[]string{"maxmemory 536870912", "maxmemory-policy noeviction"}},
		{"0% turns maxmemory off", kvv1.KVStoreSpec{Tuning: kvv1.TuningSpec{MaxMemoryPercent: ptr.To[int32](0)}},
			[]string{"maxmemory-policy noeviction"}},
		{"no memory limit, no maxmemory", kvv1.KVStoreSpec{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
			[]string{"maxmemory-policy noeviction"}},
		{"the user's config wins", kvv1.KVStoreSpec{Mode: kvv1.ModeCache, Config: map[string]string{"MaxMemory": "1mb", "maxmemory-policy": "volatile-ttl"}},
			[]string{"MaxMemory 1mb", "maxmemory-policy volatile-ttl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf := renderConfig(&kvv1.KVStore{Spec: tt.spec})
			var got []string
			for _, l := range strings.Split(conf, "\n") {
				if strings.HasPrefix(strings.ToLower(l), "maxmemory") {
					got = append(got, l)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("maxmemory directives %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTunedConfigOnARealServer starts a server with the tuned directives
// and reads them back: the server accepts what the operator derives.
func TestTunedConfigOnARealServer(t *testing.T) {
	k := &kvv1.KVStore{Spec: kvv1.KVStoreSpec{Mode: kvv1.ModeCache}}
	var lines []string
	for _, d := range tuned(k, nil) {
		lines = append(lines, d[0]+" "+d[1])
	}
	s := instancetest.Start(t, "", lines...)
	st, err := instance.RESP{}.Status(context.Background(), s.Target())
	if err != nil {
		t.Fatal(err)
	}
	if st.MaxMemory != 201326592 {
		t.Errorf("the server runs maxmemory %d, want 75%% of 256Mi", st.MaxMemory)
	}
	c, err := instance.Dial(context.Background(), s.Target(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := c.Do("CONFIG", "GET", "maxmemory-policy"); err != nil || fmt.Sprint(v) != fmt.Sprint([]any{[]byte("maxmemory-policy"), []byte("allkeys-lru")}) {
		t.Errorf("maxmemory-policy %v, %v", v, err)
	}
}
