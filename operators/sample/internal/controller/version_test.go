package controller

import (
	"strings"
	"testing"

	kvv1 "opctl.dev/opctl/operators/sample/api/v1alpha1"
)

func TestCheckVersion(t *testing.T) {
	tests := []struct {
		version string
		wantErr string
	}{
		{"7.2.0", ""},
		{"8.1.3", ""},
		{"8.99.0", ""},
		{"7.1.9", "not supported: use a version from 7.2.0 up to, not including, 9.0.0"},
		{"9.0.0", "not supported"},
		{"8.1", "not MAJOR.MINOR.PATCH"},
		{"8.x.1", "not MAJOR.MINOR.PATCH"},
		{"", "not MAJOR.MINOR.PATCH"},
	}
	for _, tt := range tests {
		err := checkVersion(tt.version)
		if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("checkVersion(%q) = %v, want error containing %q", tt.version, err, tt.wantErr)
		}
	}
}

func TestImageFor(t *testing.T) {
	const pinned = "mirror.example/valkey/valkey:8.1.3@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		base, version, want string
	}{
		{"", "8.1.3", "valkey/valkey:8.1.3"},
		{"mirror.example:5000/valkey", "8.0.2", "mirror.example:5000/valkey:8.0.2"},
		{"mirror.example/valkey/valkey:7.2.5", "8.1.3", "mirror.example/valkey/valkey:8.1.3"},
		{pinned, "8.1.3", pinned},
		{pinned, "8.1.4", "mirror.example/valkey/valkey:8.1.4"},
	}
	for _, tt := range tests {
		if got := imageFor(tt.base, tt.version); got != tt.want {
			t.Errorf("imageFor(%q, %q) = %q, want %q", tt.base, tt.version, got, tt.want)
		}
	}
}

func TestRunVersion(t *testing.T) {
	k := &kvv1.KVStore{}
	k.Spec.Version = "8.1.4"
	k.Status.CurrentVersion = "8.1.3"
	if got := runVersion(k); got != "8.1.4" {
		t.Errorf("upgrade in flight runs %s, want 8.1.4", got)
	}
	k.Status.FailedVersion = "8.1.4"
	if got := runVersion(k); got != "8.1.3" {
		t.Errorf("failed upgrade runs %s, want the rollback version 8.1.3", got)
	}
	k.Spec.Version = "8.1.5"
	if got := runVersion(k); got != "8.1.5" {
		t.Errorf("a new version after a failure runs %s, want 8.1.5", got)
	}
}
