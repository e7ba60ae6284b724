package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	tests := []struct {
		name       string
		bi         *debug.BuildInfo
		wantK8s    string
		wantLibs   []Library
		wantCommit string
	}{
		{
			name:     "no build info",
			bi:       nil,
			wantLibs: []Library{},
		},
		{
			name: "tracked libraries in fixed order, replacements honoured",
			bi: &debug.BuildInfo{
				Deps: []*debug.Module{
					{Path: "sigs.k8s.io/controller-runtime", Version: "v0.24.1"},
					{Path: "example.com/untracked", Version: "v1.0.0"},
					{Path: "k8s.io/client-go", Version: "v0.36.3"},
					{Path: "helm.sh/helm/v3", Version: "v3.0.0", Replace: &debug.Module{Path: "helm.sh/helm/v3", Version: "v3.21.4"}},
				},
				Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}},
			},
			wantK8s: "1.36.3",
			wantLibs: []Library{
				{Path: "k8s.io/client-go", Version: "v0.36.3"},
				{Path: "sigs.k8s.io/controller-runtime", Version: "v0.24.1"},
				{Path: "helm.sh/helm/v3", Version: "v3.21.4"},
			},
			wantCommit: "abc123",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fromBuildInfo(tt.bi)
			if got.Kubernetes != tt.wantK8s {
				t.Errorf("Kubernetes = %q, want %q", got.Kubernetes, tt.wantK8s)
			}
			if got.Commit != tt.wantCommit {
				t.Errorf("Commit = %q, want %q", got.Commit, tt.wantCommit)
			}
			if len(got.Libraries) != len(tt.wantLibs) {
				t.Fatalf("Libraries = %v, want %v", got.Libraries, tt.wantLibs)
			}
			for i := range got.Libraries {
				if got.Libraries[i] != tt.wantLibs[i] {
					t.Errorf("Libraries[%d] = %v, want %v", i, got.Libraries[i], tt.wantLibs[i])
				}
			}
			if got.GoVersion == "" || got.Platform == "" {
				t.Errorf("GoVersion/Platform empty: %+v", got)
			}
		})
	}
}

func TestKubernetesVersion(t *testing.T) {
	for in, want := range map[string]string{"v0.36.3": "1.36.3", "": "", "v1.2.3": "", "(devel)": ""} {
		if got := kubernetesVersion(in); got != want {
			t.Errorf("kubernetesVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
