package packaging

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestOperandImages(t *testing.T) {
	c := corev1.Container{
		Env: []corev1.EnvVar{
			{Name: "RELATED_IMAGE_WORKER", Value: "example.com/worker:1"},
			{Name: "MEMCACHED_IMAGE", Value: "memcached:1.6"},
			{Name: "PULL_IMAGE", Value: "true"},          // not a reference
			{Name: "BASE_IMAGE", Value: ""},              // empty
			{Name: "IMAGE_PULL_POLICY", Value: "Always"}, // not *_IMAGE
			{Name: "DB_IMAGE", Value: "has space:1"},     // not a reference
			{Name: "SIDECAR_IMAGE", Value: "ghcr.io/a/b@sha256:" + sha},
			{Name: "CONSOLE_LINK_IMAGE", Value: "/assets/branding/loader.svg"}, // a file path
		},
		Args: []string{"--leader-elect", "--redis-image=redis:7", "--image-pull-secret=foo", "--metrics-bind-address=:8080", "--image=quay.io/x/y:2"},
	}
	got := OperandImages(c)
	want := []OperandImage{
		{Key: "worker", Image: "example.com/worker:1", Env: "RELATED_IMAGE_WORKER", Arg: -1},
		{Key: "memcached", Image: "memcached:1.6", Env: "MEMCACHED_IMAGE", Arg: -1},
		{Key: "sidecar", Image: "ghcr.io/a/b@sha256:" + sha, Env: "SIDECAR_IMAGE", Arg: -1},
		{Key: "redis", Image: "redis:7", Arg: 1, Flag: "--redis-image="},
		{Key: "image", Image: "quay.io/x/y:2", Arg: 4, Flag: "--image="},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OperandImages:\n got %+v\nwant %+v", got, want)
	}
}

const sha = "0000000000000000000000000000000000000000000000000000000000000000"
