package packaging

import (
	"testing"

	"github.com/operator-framework/operator-registry/pkg/lib/bundle"
)

// TestBundleMetadataMatchesOperatorRegistry holds annotations.yaml and
// bundle.Dockerfile to what operator-registry's lib/bundle generates for
// the same package and channels.
func TestBundleMetadataMatchesOperatorRegistry(t *testing.T) {
	tests := []struct {
		name, pkg, channels, defaultChannel string
	}{
		{"one channel", "memcached-operator", "alpha", ""},
		{"default channel", "sample-operator", "alpha,stable", "stable"},
		{"odd characters", "a.b_c", "fast-1.2", "fast-1.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantAnn, err := bundle.GenerateAnnotations(bundle.RegistryV1Type, bundle.ManifestsDir, bundle.MetadataDir, tt.pkg, tt.channels, tt.defaultChannel)
			if err != nil {
				t.Fatal(err)
			}
			gotAnn, err := bundleAnnotations(tt.pkg, tt.channels, tt.defaultChannel)
			if err != nil {
				t.Fatal(err)
			}
			if string(gotAnn) != string(wantAnn) {
				t.Errorf("annotations.yaml:\n%s\nlib/bundle:\n%s", gotAnn, wantAnn)
			}
			wantDf, err := bundle.GenerateDockerfile(bundle.RegistryV1Type, bundle.ManifestsDir, bundle.MetadataDir, "manifests/", "metadata/", ".", tt.pkg, tt.channels, tt.defaultChannel, "scratch")
			if err != nil {
				t.Fatal(err)
			}
			if got := bundleDockerfile(tt.pkg, tt.channels, tt.defaultChannel); string(got) != string(wantDf) {
				t.Errorf("bundle.Dockerfile:\n%s\nlib/bundle:\n%s", got, wantDf)
			}
		})
	}
}
